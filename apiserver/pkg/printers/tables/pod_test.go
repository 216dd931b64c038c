package tables

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodRowConditionsValues(t *testing.T) {
	want := []metav1.TableRowCondition{{
		Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "The pod has completed successfully.",
	}}
	if got := podSucceededConditions(); !reflect.DeepEqual(got, want) {
		t.Errorf("succeeded conditions = %#v, want %#v", got, want)
	}
	want = []metav1.TableRowCondition{{
		Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Failed", Message: "The pod failed.",
	}}
	if got := podFailedConditions(); !reflect.DeepEqual(got, want) {
		t.Errorf("failed conditions = %#v, want %#v", got, want)
	}
}

func TestPodIPPrefersStatusPodIP(t *testing.T) {
	tests := []struct {
		name   string
		status corev1.PodStatus
		want   string
	}{
		{name: "none", want: ""},
		{name: "podIP only", status: corev1.PodStatus{PodIP: "10.0.0.1"}, want: "10.0.0.1"},
		{name: "podIPs only", status: corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.0.0.2"}}}, want: "10.0.0.2"},
		{name: "both differ", status: corev1.PodStatus{PodIP: "10.0.0.3", PodIPs: []corev1.PodIP{{IP: "10.0.0.4"}}}, want: "10.0.0.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podIP(&tt.status); got != tt.want {
				t.Errorf("podIP = %q, want %q", got, tt.want)
			}
		})
	}
}
