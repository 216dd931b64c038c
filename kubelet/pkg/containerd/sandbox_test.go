package containerd

import (
	"context"
	"errors"
	"testing"

	"github.com/containerd/containerd/containers"
	"github.com/containerd/containerd/namespaces"
	"github.com/containerd/containerd/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"skiff.dev/kubelet/pkg/pod"
)

// fakeNamespaces answers pidNamespaces without containerd.
type fakeNamespaces struct {
	sandboxes []string // pod UIDs whose sandbox was asked for
	fail      error
}

func (f *fakeNamespaces) target(_ context.Context, id string) (string, error) {
	if f.fail != nil {
		return "", f.fail
	}
	return "/proc/42/ns/pid", nil
}

func (f *fakeNamespaces) sandbox(_ context.Context, s pod.ContainerSpec) (string, string, bool, error) {
	if f.fail != nil {
		return "", "", false, f.fail
	}
	uid := s.Labels[pod.LabelPodUID]
	f.sandboxes = append(f.sandboxes, uid)
	return "sandbox-" + uid, "/proc/7/ns/pid", true, nil
}

// pidNamespaceOf is the PID namespace of the OCI spec that containerd's
// default spec and opts make; ok is false when there is none (the host's).
func pidNamespaceOf(t *testing.T, opts []oci.SpecOpts) (ns specs.LinuxNamespace, ok bool) {
	t.Helper()
	ctx := namespaces.WithNamespace(context.Background(), "test")
	spec, err := oci.GenerateSpec(ctx, nil, &containers.Container{ID: "c1"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range spec.Linux.Namespaces {
		if n.Type == specs.PIDNamespace {
			return n, true
		}
	}
	return specs.LinuxNamespace{}, false
}

// Each container of a pod with shareProcessNamespace joins the sandbox's
// PID namespace by its path (containerd's CRI's NamespaceMode POD); without
// it a container has a new one of its own, with hostPID none (the host's),
// and with a target the target's.
func TestPIDNamespaceSpec(t *testing.T) {
	labels := map[string]string{pod.LabelPodUID: "u1"}
	tests := []struct {
		name     string
		spec     pod.ContainerSpec
		host     bool
		path     string
		sandbox  string
		sandboxQ int
	}{
		{name: "own namespace", spec: pod.ContainerSpec{Labels: labels}},
		{name: "shareProcessNamespace", spec: pod.ContainerSpec{Labels: labels, SharePID: true}, path: "/proc/7/ns/pid", sandbox: "sandbox-u1", sandboxQ: 1},
		{name: "target", spec: pod.ContainerSpec{Labels: labels, TargetID: "t"}, path: "/proc/42/ns/pid"},
		{name: "hostPID", spec: pod.ContainerSpec{Labels: labels, HostPID: true}, host: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nss := &fakeNamespaces{}
			opts, sandbox, _, err := pidNamespaceSpec(context.Background(), tt.spec, nss)
			if err != nil {
				t.Fatal(err)
			}
			ns, ok := pidNamespaceOf(t, opts)
			if ok == tt.host || ns.Path != tt.path {
				t.Errorf("PID namespace %+v (present %v), want path %q, host %v", ns, ok, tt.path, tt.host)
			}
			if sandbox != tt.sandbox || len(nss.sandboxes) != tt.sandboxQ {
				t.Errorf("sandbox %q (asked %v), want %q", sandbox, nss.sandboxes, tt.sandbox)
			}
		})
	}
	// A sandbox that cannot be started fails the container's creation.
	boom := errors.New("boom")
	if _, _, _, err := pidNamespaceSpec(context.Background(), pod.ContainerSpec{Labels: labels, SharePID: true}, &fakeNamespaces{fail: boom}); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}
