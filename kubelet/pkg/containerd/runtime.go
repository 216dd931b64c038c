package containerd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/containerd/containerd"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	tasktypes "github.com/containerd/containerd/api/types/task"
	"github.com/containerd/containerd/cio"
	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/namespaces"
	"github.com/containerd/containerd/oci"
	"github.com/containerd/containerd/remotes/docker"
	"github.com/distribution/reference"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/images"
	"skiff.dev/kubelet/pkg/logs"
	"skiff.dev/kubelet/pkg/pod"
)

// Labels the runtime keeps on a container for what containerd forgets
// once the task is deleted.
const (
	labelImageID    = "skiff.dev/image-id"
	labelStartedAt  = "skiff.dev/started-at"
	labelFinishedAt = "skiff.dev/finished-at"
	labelExitCode   = "skiff.dev/exit-code"
	labelReason     = "skiff.dev/reason"
)

// Runtime implements pod.Runtime with containerd, in one containerd
// namespace.
type Runtime struct {
	client      *containerd.Client
	namespace   string
	snapshotter string
	registries  *images.Registries
	logDriver   string
	pause       string

	// sbMu orders the making and removal of pods' sandbox containers
	// (sandbox.go).
	sbMu sync.Mutex

	// images remembers the references already found present and
	// unpacked, so a pod's start does not ask containerd again (skiff
	// removes no images; a pull updates the entry, and a reference that
	// containerd no longer has is forgotten when a container is created
	// from it).
	mu     sync.Mutex
	images map[string]pod.Image

	// stdins are the open stdins of running containers (stdin.go).
	smu      sync.Mutex
	stdins   map[string]*stdinStream
	stopping atomic.Bool
}

var _ pod.Runtime = (*Runtime)(nil)

// Options configure New.
type Options struct {
	Address     string
	Namespace   string
	Snapshotter string
	Registries  *images.Registries
	// LogDriver is the executable that containerd's shim starts to write
	// a container's log file (logs.DriverMain); empty: the shim writes
	// the raw output itself, without timestamps.
	LogDriver string
	// Pause is the pause program (skiff-pause, statically linked) that a
	// pod's sandbox container runs, bind-mounted into an empty root
	// filesystem; empty: pods with shareProcessNamespace cannot start.
	Pause string
}

// New connects to containerd. It does not wait for containerd to answer.
func New(o Options) (*Runtime, error) {
	if o.Namespace == "" {
		return nil, errors.New("containerd namespace must not be empty")
	}
	if o.Snapshotter == "" {
		o.Snapshotter = containerd.DefaultSnapshotter
	}
	if o.Registries == nil {
		o.Registries = &images.Registries{}
	}
	client, err := containerd.New(o.Address, containerd.WithDefaultNamespace(o.Namespace), containerd.WithTimeout(0))
	if err != nil {
		return nil, fmt.Errorf("connecting to containerd at %s: %w", o.Address, err)
	}
	return &Runtime{client: client, namespace: o.Namespace, snapshotter: o.Snapshotter, registries: o.Registries, logDriver: o.LogDriver, pause: o.Pause}, nil
}

// Close closes the connection.
func (r *Runtime) Close() error {
	r.closeStdins()
	return r.client.Close()
}

func (r *Runtime) ns(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, r.namespace)
}

// Version is containerd's version, e.g. "1.6.20~ds1".
func (r *Runtime) Version(ctx context.Context) (string, error) {
	v, err := r.client.Version(r.ns(ctx))
	if err != nil {
		return "", err
	}
	return v.Version, nil
}

// GetImage implements pod.Runtime; the image is unpacked if needed.
func (r *Runtime) GetImage(ctx context.Context, ref string) (pod.Image, error) {
	if img, ok := r.cachedImage(ref); ok {
		return img, nil
	}
	ctx = r.ns(ctx)
	img, err := r.client.GetImage(ctx, ref)
	if errdefs.IsNotFound(err) {
		return pod.Image{}, fmt.Errorf("%s: %w", ref, pod.ErrImageNotFound)
	}
	if err != nil {
		return pod.Image{}, err
	}
	ok, err := img.IsUnpacked(ctx, r.snapshotter)
	if err != nil {
		return pod.Image{}, err
	}
	if !ok {
		if err := img.Unpack(ctx, r.snapshotter); err != nil {
			return pod.Image{}, fmt.Errorf("unpacking %s: %w", ref, err)
		}
	}
	return r.cacheImage(pod.Image{Ref: ref, ID: imageID(ref, img.Target().Digest.String())}), nil
}

func (r *Runtime) cachedImage(ref string) (pod.Image, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	img, ok := r.images[ref]
	return img, ok
}

func (r *Runtime) cacheImage(img pod.Image) pod.Image {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.images == nil {
		r.images = map[string]pod.Image{}
	}
	r.images[img.Ref] = img
	return img
}

func (r *Runtime) forgetImage(ref string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.images, ref)
}

// PullImage implements pod.Runtime.
func (r *Runtime) PullImage(ctx context.Context, ref string, creds []images.Credential) (pod.Image, error) {
	ctx = r.ns(ctx)
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: r.registries.HostsWithCreds(images.MatchCreds(creds))})
	img, err := r.client.Pull(ctx, ref, containerd.WithPullUnpack, containerd.WithResolver(resolver), containerd.WithPullSnapshotter(r.snapshotter))
	if err != nil {
		return pod.Image{}, r.registries.PullError(ref, err)
	}
	return r.cacheImage(pod.Image{Ref: ref, ID: imageID(ref, img.Target().Digest.String())}), nil
}

// imageID is repository@digest, as upstream's imageID.
func imageID(ref, digest string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref + "@" + digest
	}
	return named.Name() + "@" + digest
}

// CreateContainer implements pod.Runtime.
func (r *Runtime) CreateContainer(ctx context.Context, s pod.ContainerSpec) error {
	ctx = r.ns(ctx)
	img, err := r.client.GetImage(ctx, s.Image)
	if err != nil {
		return r.imageErr(s.Image, "image", err)
	}
	cfg, err := img.Spec(ctx)
	if err != nil {
		return r.imageErr(s.Image, "image config", err)
	}
	args := ProcessArgs(cfg.Config.Entrypoint, cfg.Config.Cmd, s.Command, s.Args)
	if len(args) == 0 {
		return errors.New("no command specified")
	}
	specOpts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		oci.WithProcessArgs(args...),
		oci.WithEnv(s.Env),
		oci.WithHostname(s.Hostname),
	}
	if s.WorkingDir != "" {
		specOpts = append(specOpts, oci.WithProcessCwd(s.WorkingDir))
	}
	switch {
	case s.HostNetwork:
		specOpts = append(specOpts, oci.WithHostNamespace(specs.NetworkNamespace), oci.WithHostHostsFile, oci.WithHostResolvconf)
	case s.NetNSPath != "":
		specOpts = append(specOpts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: s.NetNSPath}))
	}
	pidOpts, sandbox, fresh, err := r.pidNamespaceOpts(ctx, s)
	if err != nil {
		return err
	}
	specOpts = append(specOpts, pidOpts...)
	if len(s.Mounts) > 0 {
		var ms []specs.Mount
		for _, m := range s.Mounts {
			mode := "rw"
			if m.ReadOnly {
				mode = "ro"
			}
			ms = append(ms, specs.Mount{Type: "bind", Source: m.Source, Destination: m.Destination, Options: []string{"rbind", "rprivate", mode}})
		}
		specOpts = append(specOpts, oci.WithMounts(ms))
	}
	specOpts = append(specOpts, securityOpts(s.Security)...)
	if s.MemoryLimit > 0 {
		specOpts = append(specOpts, oci.WithMemoryLimit(uint64(s.MemoryLimit)))
	}
	if s.CPUShares > 0 {
		specOpts = append(specOpts, oci.WithCPUShares(s.CPUShares))
	}
	if s.CPUQuota > 0 {
		specOpts = append(specOpts, oci.WithCPUCFS(s.CPUQuota, s.CPUPeriod))
	}
	if s.CgroupParent != "" {
		// Under the pod's cgroup, as upstream's cgroupfs driver names it.
		specOpts = append(specOpts, oci.WithCgroup(path.Join(s.CgroupParent, s.ID)))
	}
	labels := map[string]string{labelImageID: imageID(s.Image, img.Target().Digest.String())}
	for k, v := range s.Labels {
		labels[k] = v
	}
	if sandbox != "" {
		labels[labelSandbox] = sandbox
	}
	if s.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(s.LogPath), 0o755); err != nil {
			return err
		}
		labels[labelLogPath] = s.LogPath
	}
	switch {
	case s.StdinOnce:
		labels[labelStdin] = "once"
	case s.Stdin:
		labels[labelStdin] = "open"
	}
	if s.TTY {
		specOpts = append(specOpts, oci.WithTTY)
		labels[labelTTY] = "true"
	}
	_, err = r.client.NewContainer(ctx, s.ID,
		containerd.WithImage(img),
		containerd.WithNewSnapshot(s.ID, img, nil...),
		containerd.WithRuntime("io.containerd.runc.v2", nil),
		containerd.WithContainerLabels(labels),
		containerd.WithNewSpec(specOpts...),
	)
	if err != nil {
		if fresh {
			// No container holds the sandbox just made.
			r.removeUnusedSandbox(ctx, sandbox)
		}
		// Not found here is the image's content or snapshot, removed
		// since the image was read.
		return r.imageErr(s.Image, "creating container from image", err)
	}
	return nil
}

// pidNamespace is the path of the PID namespace of the running container id.
func (r *Runtime) pidNamespace(ctx context.Context, id string) (string, error) {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return "", fmt.Errorf("target container %s: %w", id, err)
	}
	ns, err := runningPIDNamespace(ctx, c)
	if err != nil {
		return "", fmt.Errorf("target container %s: %w", id, err)
	}
	return ns, nil
}

// runningPIDNamespace is the path of the PID namespace of c's task, an
// error when it does not run.
func runningPIDNamespace(ctx context.Context, c containerd.Container) (string, error) {
	task, err := c.Task(ctx, nil)
	if err != nil {
		return "", err
	}
	st, err := task.Status(ctx)
	if err != nil {
		return "", err
	}
	if st.Status != containerd.Running || task.Pid() == 0 {
		return "", fmt.Errorf("not running (%s)", st.Status)
	}
	return fmt.Sprintf("/proc/%d/ns/pid", task.Pid()), nil
}

// imageErr is err about the image ref while creating a container: one
// that says the image (or part of it) is gone is forgotten and reported
// as pod.ErrImageNotFound, so that the pod worker pulls it again.
func (r *Runtime) imageErr(ref, what string, err error) error {
	if errdefs.IsNotFound(err) {
		r.forgetImage(ref)
		return fmt.Errorf("%s %s: %w: %v", what, ref, pod.ErrImageNotFound, err)
	}
	return fmt.Errorf("%s %s: %w", what, ref, err)
}

// labelLogPath is the container's log file (as the pod package labels it).
const labelLogPath = pod.LabelLogPath

// ProcessArgs is upstream's rule: command replaces the image's
// entrypoint, args replace its cmd; command without args drops the cmd.
func ProcessArgs(entrypoint, cmd, command, args []string) []string {
	switch {
	case len(command) > 0:
		return append(append([]string{}, command...), args...)
	case len(args) > 0:
		return append(append([]string{}, entrypoint...), args...)
	}
	return append(append([]string{}, entrypoint...), cmd...)
}

// StartContainer implements pod.Runtime: its task is created and started,
// with stdout and stderr going to the log file.
func (r *Runtime) StartContainer(ctx context.Context, id string) error {
	ctx = r.ns(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return err
	}
	labels, err := c.Labels(ctx)
	if err != nil {
		return err
	}
	creator := cio.NullIO
	if p := labels[labelLogPath]; p != "" {
		creator = cio.LogFile(p)
		if r.logDriver != "" {
			creator = cio.BinaryIO(r.logDriver, map[string]string{logs.DriverArg: p})
		}
	}
	finish := func() {}
	if copiedStreams(labels) {
		opt, done, ok, err := r.stdinIO(id, labels)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("container %s is being started already", id)
		}
		creator, finish = cio.NewCreator(opt), done
	}
	task, err := c.NewTask(ctx, creator)
	if err != nil {
		finish()
		return fmt.Errorf("creating task: %w", err)
	}
	if copiedStreams(labels) {
		r.copyUntilExit(ctx, id, task, finish)
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(ctx, containerd.WithProcessKill)
		return fmt.Errorf("starting task: %w", err)
	}
	_, err = c.SetLabels(ctx, map[string]string{labelStartedAt: time.Now().UTC().Format(time.RFC3339Nano)})
	return err
}

// StopContainer implements pod.Runtime.
func (r *Runtime) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	ctx = r.ns(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil
		}
		return err
	}
	task, err := c.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	exited, err := task.Wait(ctx)
	if err != nil {
		return err
	}
	if err := task.Kill(ctx, syscall.SIGTERM); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("sending SIGTERM: %w", err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-exited:
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		if err := task.Kill(ctx, syscall.SIGKILL, containerd.WithKillAll); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("sending SIGKILL: %w", err)
		}
		select {
		case <-exited:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	_, err = r.reap(ctx, c, task)
	return err
}

// reap records a stopped task's exit in the container's labels and
// deletes the task.
func (r *Runtime) reap(ctx context.Context, c containerd.Container, task containerd.Task) (map[string]string, error) {
	st, err := task.Status(ctx)
	if errdefs.IsNotFound(err) {
		// Reaped meanwhile by another listing (the PLEG's relist runs
		// beside the workers' stops): its exit is in the labels.
		return c.Labels(ctx)
	}
	if err != nil {
		return nil, err
	}
	finished := st.ExitTime
	if finished.IsZero() {
		finished = time.Now()
	}
	set := map[string]string{
		labelExitCode:   strconv.FormatUint(uint64(st.ExitStatus), 10),
		labelFinishedAt: finished.UTC().Format(time.RFC3339Nano),
	}
	if r.oomKilled(ctx, c) {
		set[labelReason] = "OOMKilled"
	}
	labels, err := c.SetLabels(ctx, set)
	if err != nil {
		return nil, err
	}
	if _, err := task.Delete(ctx); err != nil && !errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("deleting task: %w", err)
	}
	return labels, nil
}

// RemoveContainer implements pod.Runtime: the task is killed and deleted,
// then the container and its snapshot.
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	ctx = r.ns(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	info, err := c.Info(ctx, containerd.WithoutRefreshedMetadata)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if task, err := c.Task(ctx, nil); err == nil {
		if _, err := task.Delete(ctx, containerd.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("deleting task: %w", err)
		}
	} else if !errdefs.IsNotFound(err) {
		return err
	}
	if err := c.Delete(ctx, containerd.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("deleting container: %w", err)
	}
	if sb := info.Labels[labelSandbox]; sb != "" {
		r.removeUnusedSandbox(ctx, sb)
	}
	return nil
}

// ListContainers implements pod.Runtime: the containers that carry a pod
// UID label, with their state; exited tasks are reaped on the way. The
// tasks' states come from one listing of containerd's tasks, so a listing
// costs two calls to containerd however many containers there are (the
// PLEG's relist lists every pod's), plus one per task to reap.
func (r *Runtime) ListContainers(ctx context.Context, podUID types.UID) ([]pod.Container, error) {
	ctx = r.ns(ctx)
	filter := fmt.Sprintf("labels.%q", pod.LabelPodUID)
	if podUID != "" {
		filter = fmt.Sprintf("labels.%q==%s", pod.LabelPodUID, podUID)
	}
	list, err := r.client.Containers(ctx, filter)
	if err != nil {
		return nil, err
	}
	// After the containers: a task of a listed container is in it unless
	// it was deleted meanwhile.
	resp, err := r.client.TaskService().List(ctx, &tasksapi.ListTasksRequest{})
	if err != nil {
		return nil, err
	}
	procs := make(map[string]*tasktypes.Process, len(resp.Tasks))
	for _, t := range resp.Tasks {
		procs[t.ID] = t
	}
	out := make([]pod.Container, 0, len(list))
	for _, c := range list {
		pc, err := r.status(ctx, c, procs[c.ID()])
		if errdefs.IsNotFound(err) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, pc)
	}
	return out, nil
}

// status reads a container's state from its task as the tasks' listing
// showed it (proc; nil when it had none).
func (r *Runtime) status(ctx context.Context, c containerd.Container, proc *tasktypes.Process) (pod.Container, error) {
	info, err := c.Info(ctx, containerd.WithoutRefreshedMetadata)
	if err != nil {
		return pod.Container{}, err
	}
	labels := info.Labels
	pc := pod.Container{ID: c.ID(), CreatedAt: info.CreatedAt, Image: info.Image}
	if proc != nil {
		switch proc.Status {
		case tasktypes.Status_RUNNING, tasktypes.Status_PAUSED, tasktypes.Status_PAUSING:
			pc.State = pod.StateRunning
		case tasktypes.Status_STOPPED:
			task, err := c.Task(ctx, nil)
			switch {
			case errdefs.IsNotFound(err):
				// Reaped meanwhile: its exit is in the labels, read again.
				if info, err = c.Info(ctx); err != nil {
					return pod.Container{}, err
				}
				labels = info.Labels
			case err != nil:
				return pod.Container{}, err
			default:
				if labels, err = r.reap(ctx, c, task); err != nil {
					return pod.Container{}, err
				}
			}
		default:
			pc.State = pod.StateCreated
		}
	}
	if pc.State == pod.StateRunning {
		// Not fatal to the listing: the task may have just exited.
		if err := r.reattachStdin(ctx, c, labels); err != nil {
			klog.FromContext(ctx).V(2).Info("Container's stdin not taken up again", "container", c.ID(), "err", err)
		}
	}
	pc.Labels = labels
	pc.ImageID = labels[labelImageID]
	pc.StartedAt = parseTime(labels[labelStartedAt])
	if pc.State == "" {
		pc.State = exitedOrCreated(&pc, labels)
	}
	return pc, nil
}

// exitedOrCreated reads the state of a container without a task from its
// labels: exited when it has an exit code or was started (its task was
// lost with containerd's state), else created.
func exitedOrCreated(pc *pod.Container, labels map[string]string) pod.ContainerState {
	if code, ok := labels[labelExitCode]; ok {
		n, _ := strconv.ParseInt(code, 10, 32)
		pc.ExitCode = int32(n)
		pc.FinishedAt = parseTime(labels[labelFinishedAt])
		pc.Reason = labels[labelReason]
		return pod.StateExited
	}
	if _, ok := labels[labelStartedAt]; ok {
		pc.ExitCode = 255
		pc.Reason = "ContainerStatusUnknown"
		pc.FinishedAt = pc.StartedAt
		return pod.StateExited
	}
	return pod.StateCreated
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// lockedBuffer collects stdout and stderr of an exec.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 10<<10 { // keep at most ~10 KiB, as upstream caps probe output
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte{}, b.buf.Bytes()...)
}

// Exec implements pod.Runtime: cmd runs in the container with its
// process settings; it is killed after timeout.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (int32, []byte, error) {
	ctx = r.ns(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("container %s is not running: %w", id, err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return 0, nil, err
	}
	proc := *spec.Process
	proc.Args, proc.Terminal = cmd, false
	out := &lockedBuffer{}
	execID := "exec-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	p, err := task.Exec(ctx, execID, &proc, cio.NewCreator(cio.WithStreams(nil, out, out)))
	if err != nil {
		return 0, nil, fmt.Errorf("exec: %w", err)
	}
	defer func() { _, _ = p.Delete(context.WithoutCancel(ctx), containerd.WithProcessKill) }()
	statusC, err := p.Wait(ctx)
	if err != nil {
		return 0, nil, err
	}
	if err := p.Start(ctx); err != nil {
		return 0, nil, fmt.Errorf("exec start: %w", err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case st := <-statusC:
		if io := p.IO(); io != nil {
			io.Wait()
		}
		return int32(st.ExitCode()), out.Bytes(), st.Error()
	case <-timer.C:
		_ = p.Kill(ctx, syscall.SIGKILL)
		return 0, out.Bytes(), fmt.Errorf("command timed out after %s", timeout)
	case <-ctx.Done():
		return 0, out.Bytes(), ctx.Err()
	}
}
