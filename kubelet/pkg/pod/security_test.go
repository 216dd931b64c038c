package pod

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestSecurityFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.PodSecurityContext
		c    *corev1.SecurityContext
		want Security
	}{
		{name: "none", want: Security{}},
		{
			name: "pod level",
			pod:  &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](5), RunAsGroup: ptr.To[int64](6), SupplementalGroups: []int64{7}},
			want: Security{RunAsUser: ptr.To[int64](5), RunAsGroup: ptr.To[int64](6), SupplementalGroups: []int64{7}},
		},
		{
			name: "pod sysctls",
			pod:  &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "net.ipv4.ip_local_port_range", Value: "1024 65000"}}},
			c:    &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)},
			want: Security{ReadOnlyRootFilesystem: true, Sysctls: map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.ip_local_port_range": "1024 65000"}},
		},
		{
			name: "container wins",
			pod:  &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](5)},
			c:    &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), ReadOnlyRootFilesystem: ptr.To(true)},
			want: Security{RunAsUser: ptr.To[int64](1000), ReadOnlyRootFilesystem: true},
		},
		{
			name: "capabilities and no escalation",
			c: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}}},
			want: Security{CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"ALL"}, NoNewPrivileges: true},
		},
		{
			name: "privileged ignores allowPrivilegeEscalation false",
			c:    &corev1.SecurityContext{Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false)},
			want: Security{Privileged: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: tc.pod}}
			got := SecurityFor(p, &corev1.Container{SecurityContext: tc.c})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
