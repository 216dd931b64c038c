package pod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestRestartDelay(t *testing.T) {
	tests := []struct {
		restarts int
		want     time.Duration
	}{
		{0, 0},
		{1, 10 * time.Second},
		{2, 20 * time.Second},
		{3, 40 * time.Second},
		{4, 80 * time.Second},
		{5, 160 * time.Second},
		{6, 5 * time.Minute},
		{7, 5 * time.Minute},
		{100, 5 * time.Minute},
		{-1, 0},
	}
	for _, tt := range tests {
		if got := RestartDelay(tt.restarts); got != tt.want {
			t.Errorf("RestartDelay(%d) = %s, want %s", tt.restarts, got, tt.want)
		}
	}
}

func TestShouldRestart(t *testing.T) {
	tests := []struct {
		policy corev1.RestartPolicy
		code   int32
		want   bool
	}{
		{corev1.RestartPolicyAlways, 0, true},
		{corev1.RestartPolicyAlways, 1, true},
		{"", 0, true},
		{corev1.RestartPolicyOnFailure, 0, false},
		{corev1.RestartPolicyOnFailure, 2, true},
		{corev1.RestartPolicyNever, 0, false},
		{corev1.RestartPolicyNever, 1, false},
	}
	for _, tt := range tests {
		if got := ShouldRestart(tt.policy, tt.code); got != tt.want {
			t.Errorf("ShouldRestart(%q, %d) = %v, want %v", tt.policy, tt.code, got, tt.want)
		}
	}
}

func TestPullPolicy(t *testing.T) {
	tests := []struct {
		image  string
		policy corev1.PullPolicy
		want   corev1.PullPolicy
	}{
		{"busybox", "", corev1.PullAlways},
		{"busybox:latest", "", corev1.PullAlways},
		{"busybox:1.36", "", corev1.PullIfNotPresent},
		{"127.0.0.1:5000/busybox", "", corev1.PullAlways},
		{"127.0.0.1:5000/busybox:v1", "", corev1.PullIfNotPresent},
		{"busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "", corev1.PullIfNotPresent},
		{"busybox", corev1.PullNever, corev1.PullNever},
	}
	for _, tt := range tests {
		if got := PullPolicy(corev1.Container{Image: tt.image, ImagePullPolicy: tt.policy}); got != tt.want {
			t.Errorf("PullPolicy(%q, %q) = %q, want %q", tt.image, tt.policy, got, tt.want)
		}
	}
}
