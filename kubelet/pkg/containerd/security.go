package containerd

import (
	"context"
	"strings"

	"github.com/containerd/containerd/containers"
	"github.com/containerd/containerd/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"skiff.dev/kubelet/pkg/pod"
)

// securityOpts turn a container's security settings into OCI spec
// changes on top of containerd's default spec (the OCI default
// capabilities, no_new_privs on, read-write root).
func securityOpts(s pod.Security) []oci.SpecOpts {
	var opts []oci.SpecOpts
	if s.Privileged {
		opts = append(opts, oci.WithPrivileged, oci.WithAllDevicesAllowed, oci.WithHostDevices)
	} else {
		if len(s.CapAdd) > 0 || len(s.CapDrop) > 0 {
			opts = append(opts, withCapabilityChanges(s.CapAdd, s.CapDrop))
		}
	}
	opts = append(opts, withNoNewPrivileges(s.NoNewPrivileges))
	if s.ReadOnlyRootFilesystem {
		opts = append(opts, oci.WithRootFSReadonly())
	}
	if s.RunAsUser != nil || s.RunAsGroup != nil || len(s.SupplementalGroups) > 0 {
		opts = append(opts, withUser(s))
	}
	if len(s.Sysctls) > 0 {
		opts = append(opts, withSysctls(s.Sysctls))
	}
	return opts
}

// withSysctls sets the pod's sysctls in the spec; the runtime writes them
// in the container's namespaces before its process starts (upstream sets
// them on the pod sandbox, whose namespaces the containers share).
func withSysctls(sysctls map[string]string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux == nil {
			s.Linux = &specs.Linux{}
		}
		if s.Linux.Sysctl == nil {
			s.Linux.Sysctl = map[string]string{}
		}
		for k, v := range sysctls {
			s.Linux.Sysctl[k] = v
		}
		return nil
	}
}

// withNoNewPrivileges sets the flag either way (containerd's default spec
// sets it; upstream sets it only for allowPrivilegeEscalation: false).
func withNoNewPrivileges(on bool) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Process != nil {
			s.Process.NoNewPrivileges = on
		}
		return nil
	}
}

// capName turns a pod spec capability ("net_admin", "NET_ADMIN") into
// its kernel name ("CAP_NET_ADMIN").
func capName(c string) string {
	c = strings.ToUpper(c)
	if strings.HasPrefix(c, "CAP_") {
		return c
	}
	return "CAP_" + c
}

// withCapabilityChanges applies drop, then add, to every capability set,
// as upstream: "ALL" in drop starts from nothing, "ALL" in add gives every
// known capability.
func withCapabilityChanges(add, drop []string) oci.SpecOpts {
	return func(ctx context.Context, cl oci.Client, c *containers.Container, s *oci.Spec) error {
		for _, d := range drop {
			if strings.EqualFold(d, "ALL") {
				if err := oci.WithCapabilities(nil)(ctx, cl, c, s); err != nil {
					return err
				}
			}
		}
		var dropNames, addNames []string
		for _, d := range drop {
			if !strings.EqualFold(d, "ALL") {
				dropNames = append(dropNames, capName(d))
			}
		}
		if err := oci.WithDroppedCapabilities(dropNames)(ctx, cl, c, s); err != nil {
			return err
		}
		for _, a := range add {
			if strings.EqualFold(a, "ALL") {
				return oci.WithAllKnownCapabilities(ctx, cl, c, s)
			}
			addNames = append(addNames, capName(a))
		}
		return oci.WithAddedCapabilities(addNames)(ctx, cl, c, s)
	}
}

// withUser sets uid, gid and supplementary groups; a group that is not
// given is the image's (or 0 when the image names none).
func withUser(sec pod.Security) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Process == nil {
			s.Process = &specs.Process{}
		}
		if sec.RunAsUser != nil {
			s.Process.User.UID = uint32(*sec.RunAsUser)
			if sec.RunAsGroup == nil {
				s.Process.User.GID = 0
			}
		}
		if sec.RunAsGroup != nil {
			s.Process.User.GID = uint32(*sec.RunAsGroup)
		}
		s.Process.User.Username = ""
		for _, g := range sec.SupplementalGroups {
			s.Process.User.AdditionalGids = append(s.Process.User.AdditionalGids, uint32(g))
		}
		return nil
	}
}
