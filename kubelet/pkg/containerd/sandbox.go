package containerd

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/cio"
	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/pod"
)

// A pod with shareProcessNamespace has a sandbox container, as
// containerd's CRI gives every pod one: it runs the pause program (as its
// user 65535, without capabilities, on an empty read-only root filesystem
// holding only /pause), PID 1 of a new PID namespace that the pod's
// containers join (namespace mode POD), so that they see each other's
// processes and the pause process reaps the orphans among them. It is made
// with the pod's first container, in the pod's network namespace and
// cgroup, and removed with the last container that joined it (or at once
// by pod.SandboxID). It carries no pod UID label, so ListContainers and
// with it the pod's status never show it.
const (
	// labelSandbox, on a container, is the ID of the sandbox container
	// whose PID namespace it joined.
	labelSandbox = "skiff.dev/sandbox"
	// labelSandboxOf, on a sandbox container, is its pod's UID.
	labelSandboxOf = "skiff.dev/sandbox-of"
	// pauseUID is the pause process's user and group, as upstream's
	// pause image's.
	pauseUID = 65535
)

// pidNamespaces finds the PID namespaces that containers join: a running
// target container's, and the pod's sandbox's (made when needed; fresh
// says it was).
type pidNamespaces interface {
	target(ctx context.Context, id string) (string, error)
	sandbox(ctx context.Context, s pod.ContainerSpec) (id, ns string, fresh bool, err error)
}

// pidNamespaceSpec is the OCI spec options for s's PID namespace, as
// containerd's CRI sets them for the pod's NamespaceMode: NODE (hostPID)
// leaves the spec without a PID namespace, so the process is in the host's;
// TARGET (an ephemeral container's targetContainerName) and POD
// (shareProcessNamespace) join the target's or the sandbox's by its path;
// CONTAINER keeps the default spec's new namespace. sandbox is the sandbox
// container's ID when s joins it.
func pidNamespaceSpec(ctx context.Context, s pod.ContainerSpec, nss pidNamespaces) (opts []oci.SpecOpts, sandbox string, fresh bool, err error) {
	switch {
	case s.HostPID:
		return []oci.SpecOpts{oci.WithHostNamespace(specs.PIDNamespace)}, "", false, nil
	case s.TargetID != "":
		ns, err := nss.target(ctx, s.TargetID)
		if err != nil {
			return nil, "", false, err
		}
		return []oci.SpecOpts{oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.PIDNamespace, Path: ns})}, "", false, nil
	case s.SharePID:
		id, ns, fresh, err := nss.sandbox(ctx, s)
		if err != nil {
			return nil, "", false, err
		}
		return []oci.SpecOpts{oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.PIDNamespace, Path: ns})}, id, fresh, nil
	}
	return nil, "", false, nil
}

// runtimeNamespaces is pidNamespaces on the real runtime.
type runtimeNamespaces struct{ r *Runtime }

func (n runtimeNamespaces) target(ctx context.Context, id string) (string, error) {
	return n.r.pidNamespace(ctx, id)
}

func (n runtimeNamespaces) sandbox(ctx context.Context, s pod.ContainerSpec) (string, string, bool, error) {
	return n.r.ensureSandbox(ctx, s)
}

// pidNamespaceOpts is pidNamespaceSpec on this runtime.
func (r *Runtime) pidNamespaceOpts(ctx context.Context, s pod.ContainerSpec) ([]oci.SpecOpts, string, bool, error) {
	return pidNamespaceSpec(ctx, s, runtimeNamespaces{r})
}

// ensureSandbox makes sure the sandbox container of s's pod runs and
// returns its ID and PID namespace; fresh says it was made now. A sandbox
// whose pause process is gone (killed, or lost with containerd's state) is
// removed and made again: its namespace, and every process in it, went
// with it.
func (r *Runtime) ensureSandbox(ctx context.Context, s pod.ContainerSpec) (id, ns string, fresh bool, err error) {
	uid := s.Labels[pod.LabelPodUID]
	if uid == "" {
		return "", "", false, errors.New("a container sharing its pod's PID namespace needs the pod's UID")
	}
	id = pod.SandboxID(types.UID(uid))
	r.sbMu.Lock()
	defer r.sbMu.Unlock()
	c, err := r.client.LoadContainer(ctx, id)
	switch {
	case err == nil:
		if ns, err := runningPIDNamespace(ctx, c); err == nil {
			return id, ns, false, nil
		}
		if err := r.RemoveContainer(ctx, id); err != nil {
			return "", "", false, fmt.Errorf("removing the pod's stopped sandbox container: %w", err)
		}
	case !errdefs.IsNotFound(err):
		return "", "", false, err
	}
	ns, err = r.startSandbox(ctx, id, uid, s)
	if err != nil {
		return "", "", false, fmt.Errorf("starting the pod's sandbox container: %w", err)
	}
	return id, ns, true, nil
}

// startSandbox makes and starts the sandbox container id of pod uid, in
// the network namespace and cgroup that s names, and returns the path of
// its PID namespace.
func (r *Runtime) startSandbox(ctx context.Context, id, uid string, s pod.ContainerSpec) (ns string, err error) {
	if r.pause == "" {
		return "", errors.New("the kubelet has no pause program (--pause-program; skiff-pause next to skiff-kubelet)")
	}
	// The snapshot is leased until the container holds it, so that
	// containerd's garbage collector leaves it.
	ctx, done, err := r.client.WithLease(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = done(context.WithoutCancel(ctx)) }()
	// An empty root filesystem: /pause (and runc's mount points) is all
	// it holds.
	if _, err := r.client.SnapshotService(r.snapshotter).Prepare(ctx, id, ""); err != nil && !errdefs.IsAlreadyExists(err) {
		return "", fmt.Errorf("preparing its root filesystem: %w", err)
	}
	opts := []oci.SpecOpts{
		oci.WithProcessArgs("/pause"),
		oci.WithProcessCwd("/"),
		oci.WithHostname(s.Hostname),
		oci.WithMounts([]specs.Mount{{Type: "bind", Source: r.pause, Destination: "/pause", Options: []string{"rbind", "rprivate", "ro"}}}),
		oci.WithRootFSReadonly(),
		oci.WithUIDGID(pauseUID, pauseUID),
		oci.WithCapabilities(nil),
		oci.WithNoNewPrivileges,
	}
	switch {
	case s.HostNetwork:
		opts = append(opts, oci.WithHostNamespace(specs.NetworkNamespace))
	case s.NetNSPath != "":
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: s.NetNSPath}))
	}
	if s.CgroupParent != "" {
		opts = append(opts, oci.WithCgroup(path.Join(s.CgroupParent, id)))
	}
	labels := map[string]string{labelSandboxOf: uid}
	for _, k := range []string{pod.LabelPodName, pod.LabelPodNamespace} {
		if v := s.Labels[k]; v != "" {
			labels[k] = v
		}
	}
	c, err := r.client.NewContainer(ctx, id,
		containerd.WithSnapshotter(r.snapshotter),
		containerd.WithSnapshot(id),
		containerd.WithRuntime("io.containerd.runc.v2", nil),
		containerd.WithContainerLabels(labels),
		containerd.WithNewSpec(opts...),
	)
	if err != nil {
		_ = r.client.SnapshotService(r.snapshotter).Remove(ctx, id)
		return "", err
	}
	defer func() {
		if err != nil {
			_ = c.Delete(context.WithoutCancel(ctx), containerd.WithSnapshotCleanup)
		}
	}()
	task, err := c.NewTask(ctx, cio.NullIO)
	if err != nil {
		return "", fmt.Errorf("creating task: %w", err)
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(context.WithoutCancel(ctx), containerd.WithProcessKill)
		return "", fmt.Errorf("starting task: %w", err)
	}
	return fmt.Sprintf("/proc/%d/ns/pid", task.Pid()), nil
}

// removeUnusedSandbox removes the sandbox container id when no container
// that joined it is left.
func (r *Runtime) removeUnusedSandbox(ctx context.Context, id string) {
	r.sbMu.Lock()
	defer r.sbMu.Unlock()
	list, err := r.client.Containers(ctx, fmt.Sprintf("labels.%q==%s", labelSandbox, id))
	if err == nil && len(list) == 0 {
		err = r.RemoveContainer(ctx, id)
	}
	if err != nil {
		klog.FromContext(ctx).Info("Sandbox container not removed", "sandbox", id, "err", err)
	}
}
