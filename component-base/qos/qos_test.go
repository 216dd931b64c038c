package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQOSClass(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		out := corev1.ResourceList{}
		if cpu != "" {
			out[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			out[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return out
	}
	pod := func(req, lim corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}}}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		{name: "nothing", pod: pod(nil, nil), want: corev1.PodQOSBestEffort},
		{name: "equal requests and limits", pod: pod(rl("1", "1Gi"), rl("1", "1Gi")), want: corev1.PodQOSGuaranteed},
		{name: "limits only cpu", pod: pod(nil, rl("1", "")), want: corev1.PodQOSBurstable},
		{name: "requests below limits", pod: pod(rl("500m", "1Gi"), rl("1", "1Gi")), want: corev1.PodQOSBurstable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Class(tc.pod); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
