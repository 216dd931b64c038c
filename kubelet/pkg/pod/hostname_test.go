package pod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodHostname(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name, podName, hostname, want string
	}{
		{"short name", "web-0", "", "web-0"},
		{"spec.hostname wins", "web-0", "db", "db"},
		{"63 characters stay", long, "", long},
		// Upstream's conformance test: a 69-character pod name.
		{"longer is cut to 63", long + "bbbbbb", "", long},
		{"a trailing dash goes", strings.Repeat("a", 62) + "-bbb", "", strings.Repeat("a", 62)},
		{"trailing dashes and dots go", strings.Repeat("a", 60) + "-.-x.y", "", strings.Repeat("a", 60)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.podName}, Spec: corev1.PodSpec{Hostname: tc.hostname}}
			if got := podHostname(p); got != tc.want {
				t.Errorf("podHostname = %q (%d), want %q (%d)", got, len(got), tc.want, len(tc.want))
			}
		})
	}
}
