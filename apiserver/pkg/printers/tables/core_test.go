package tables

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLoadBalancerStatusStringClipsWhenNotWide(t *testing.T) {
	s := corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.100"}, {IP: "203.0.113.101"}}}
	if got, want := loadBalancerStatusString(s, false), "203.0.113.100..."; got != want {
		t.Errorf("narrow = %q, want %q", got, want)
	}
	if got, want := loadBalancerStatusString(s, true), "203.0.113.100,203.0.113.101"; got != want {
		t.Errorf("wide = %q, want %q", got, want)
	}
}
