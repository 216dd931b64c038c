package containerd

import (
	"context"
	"slices"
	"testing"

	"github.com/containerd/containerd/containers"
	"github.com/containerd/containerd/namespaces"
	"github.com/containerd/containerd/oci"
	"k8s.io/utils/ptr"

	"skiff.dev/kubelet/pkg/pod"
)

func TestSecurityOpts(t *testing.T) {
	ctx := namespaces.WithNamespace(context.Background(), "test")
	for _, tc := range []struct {
		name  string
		sec   pod.Security
		check func(*oci.Spec) bool
	}{
		{"default: OCI caps, escalation allowed", pod.Security{}, func(s *oci.Spec) bool {
			return len(s.Process.Capabilities.Effective) == 14 && !s.Process.NoNewPrivileges && !s.Root.Readonly
		}},
		{"drop ALL add one", pod.Security{CapDrop: []string{"ALL"}, CapAdd: []string{"net_bind_service"}}, func(s *oci.Spec) bool {
			return slices.Equal(s.Process.Capabilities.Effective, []string{"CAP_NET_BIND_SERVICE"}) &&
				slices.Equal(s.Process.Capabilities.Bounding, []string{"CAP_NET_BIND_SERVICE"})
		}},
		{"drop one", pod.Security{CapDrop: []string{"NET_RAW"}}, func(s *oci.Spec) bool {
			return len(s.Process.Capabilities.Effective) == 13 && !slices.Contains(s.Process.Capabilities.Effective, "CAP_NET_RAW")
		}},
		{"user and groups", pod.Security{RunAsUser: ptr.To[int64](1000), SupplementalGroups: []int64{5}}, func(s *oci.Spec) bool {
			return s.Process.User.UID == 1000 && s.Process.User.GID == 0 && slices.Contains(s.Process.User.AdditionalGids, 5)
		}},
		{"sysctls", pod.Security{Sysctls: map[string]string{"kernel.shm_rmid_forced": "1"}}, func(s *oci.Spec) bool {
			return s.Linux.Sysctl["kernel.shm_rmid_forced"] == "1"
		}},
		{"read-only root, no_new_privs", pod.Security{ReadOnlyRootFilesystem: true, NoNewPrivileges: true}, func(s *oci.Spec) bool {
			return s.Root.Readonly && s.Process.NoNewPrivileges
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &containers.Container{ID: "c1"}
			s, err := oci.GenerateSpec(ctx, nil, c, securityOpts(tc.sec)...)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(s) {
				t.Errorf("spec process %+v root %+v", s.Process, s.Root)
			}
		})
	}
}
