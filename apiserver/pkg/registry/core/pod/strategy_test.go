package pod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPodGracePeriod(t *testing.T) {
	tests := []struct {
		name string
		pod  corev1.Pod
		opts metav1.DeleteOptions
		want int64
	}{
		{name: "unscheduled", want: 0},
		{name: "scheduled default", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}}, want: 30},
		{name: "scheduled own", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n", TerminationGracePeriodSeconds: ptr.To[int64](5)}}, want: 5},
		{name: "requested", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}}, opts: metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, want: 0},
		{name: "finished", pod: corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := GracePeriod(&tc.pod, &tc.opts); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}
