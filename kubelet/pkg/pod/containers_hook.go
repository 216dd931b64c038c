package pod

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/cm"
)

// Waiting reasons about containers, as upstream's.
const (
	ReasonContainerCreating          = "ContainerCreating"
	ReasonCrashLoopBackOff           = "CrashLoopBackOff"
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	ReasonCreateContainerError       = "CreateContainerError"
	ReasonRunContainerError          = "RunContainerError"
)

// ContainersHook starts the pod's containers once their images are ready,
// restarts exited ones as the restart policy says (with back-off), and
// stops and removes them when the pod goes away.
type ContainersHook struct {
	Runtime Runtime
	Env     EnvContext
	// LogDir holds the containers' logs: <LogDir>/<pod uid>/<name>/<attempt>.log.
	LogDir string
	// PodsDir holds the files bind-mounted at containers'
	// terminationMessagePath: <PodsDir>/<pod uid>/containers/<name>/<id>
	// (none when empty).
	PodsDir  string
	Recorder record.EventRecorder
	// Handlers runs the containers' postStart and preStop hooks (none
	// when nil).
	Handlers *HandlerRunner
}

// Name implements Hook.
func (h *ContainersHook) Name() string { return "containers" }

// Run starts what should run, then, when it changed anything, reads the
// containers again so the hooks after it see what it started.
func (h *ContainersHook) Run(ctx context.Context, s *State) error {
	var errs []error
	changed := s.Changed
	s.Changed = false
	for _, c := range containersToStart(s) {
		if interrupted(ctx) {
			// The pod is terminating: nothing more is started.
			return context.Cause(ctx)
		}
		if err := h.syncContainer(ctx, s, c); err != nil {
			errs = append(errs, err)
		}
	}
	if s.Changed {
		if err := s.Refresh(ctx, h.Runtime); err != nil {
			errs = append(errs, err)
		}
	}
	s.Changed = s.Changed || changed
	return errors.Join(errs...)
}

func (h *ContainersHook) syncContainer(ctx context.Context, s *State, c *corev1.Container) error {
	cur, prev := s.Latest(c.Name)
	switch {
	case cur == nil:
		return h.start(ctx, s, c, 0)
	case cur.State == StateCreated:
		// Created but never started (the kubelet stopped in between):
		// start it from scratch.
		s.Changed = true
		if err := h.Runtime.RemoveContainer(ctx, cur.ID); err != nil {
			return err
		}
		return h.start(ctx, s, c, cur.Attempt())
	case cur.State == StateExited && ShouldRestart(restartPolicyOf(s, c.Name), cur.ExitCode):
		if s.Now.Before(cur.FinishedAt.Add(restartDelay(s, c.Name, cur))) {
			return nil
		}
		if err := h.start(ctx, s, c, cur.Attempt()+1); err != nil {
			return err
		}
		// Keep the last exited container for lastState; older ones go,
		// with their logs.
		if prev != nil {
			return h.remove(ctx, s, *prev)
		}
	}
	return nil
}

func (h *ContainersHook) start(ctx context.Context, s *State, c *corev1.Container, attempt int) error {
	img := s.Images[c.Name]
	if img == nil || !img.Ready {
		return nil
	}
	if e, ok := s.Errors[c.Name]; ok && s.Now.Before(e.RetryAt) {
		return nil
	}
	spec, err := h.spec(ctx, s, c, img.Image, attempt)
	if err != nil {
		h.fail(s, c, ReasonCreateContainerConfigError, err)
		return nil
	}
	created := time.Now()
	s.Changed = true
	if err := h.Runtime.CreateContainer(ctx, spec); interrupted(ctx) {
		// Cut short by the pod's termination, which removes what was
		// created: not the container's failure.
		return context.Cause(ctx)
	} else if err != nil {
		if errors.Is(err, ErrImageNotFound) {
			// The image went between its pull and now (the image garbage
			// collector or a hand removed it): the images hook makes sure
			// of it again on the next sync, pulling it if need be, as
			// upstream makes sure of the image before every start.
			img.Ready = false
			h.event(s.Pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
			return nil
		}
		h.fail(s, c, ReasonCreateContainerError, err)
		return nil
	}
	h.event(s.Pod, corev1.EventTypeNormal, "Created", "Created container "+c.Name)
	if err := h.Runtime.StartContainer(ctx, spec.ID); interrupted(ctx) {
		return context.Cause(ctx)
	} else if err != nil {
		h.fail(s, c, ReasonRunContainerError, err)
		return h.Runtime.RemoveContainer(ctx, spec.ID)
	}
	delete(s.Errors, c.Name)
	h.event(s.Pod, corev1.EventTypeNormal, "Started", "Started container "+c.Name)
	klog.FromContext(ctx).V(2).Info("Started container", "pod", klog.KObj(s.Pod), "container", c.Name, "id", spec.ID, "attempt", attempt,
		"createAndStart", time.Since(created))
	if msg, err := h.Handlers.PostStart(ctx, s, c, spec.ID); interrupted(ctx) {
		// As upstream, the pod's termination does not wait for the
		// hook: it is cut short, and the termination stops the
		// container (its preStop hook, then the signal, within the
		// grace period). The cut is no failure of the hook: no
		// FailedPostStartHook event, no kill and restart here.
		klog.FromContext(ctx).V(2).Info("PostStart hook cut short: the pod is terminating", "pod", klog.KObj(s.Pod), "container", c.Name, "err", err)
		return context.Cause(ctx)
	} else if err != nil {
		// As upstream: the container is killed (its preStop hook runs)
		// and restarts as its policy says; the message stays out of the
		// event, as it may hold secrets.
		klog.FromContext(ctx).Info("PostStart hook failed", "pod", klog.KObj(s.Pod), "container", c.Name, "err", err, "message", msg)
		h.event(s.Pod, corev1.EventTypeWarning, ReasonFailedPostStartHook, "PostStartHook failed")
		s.Errors[c.Name] = ContainerError{Reason: ReasonPostStartHookError, Message: msg}
		h.event(s.Pod, corev1.EventTypeNormal, "Killing", ReasonFailedPostStartHook)
		cur := Container{ID: spec.ID, Labels: spec.Labels, State: StateRunning}
		return h.Handlers.StopContainer(ctx, h.Runtime, h.Recorder, s, cur, GracePeriod(s.Pod))
	}
	return nil
}

// fail records a failure to create or start a container; the next try
// waits with the image back-off.
func (h *ContainersHook) fail(s *State, c *corev1.Container, reason string, err error) {
	e := s.Errors[c.Name]
	e.Reason, e.Message = reason, err.Error()
	e.Failures++
	e.RetryAt = s.Now.Add(BackOff(e.Failures))
	s.Errors[c.Name] = e
	h.event(s.Pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
}

func (h *ContainersHook) event(pod *corev1.Pod, typ, reason, msg string) {
	if h.Recorder != nil {
		h.Recorder.Event(pod, typ, reason, msg)
	}
}

func (h *ContainersHook) spec(ctx context.Context, s *State, c *corev1.Container, img Image, attempt int) (ContainerSpec, error) {
	ec := h.Env
	if s.Sandbox != nil {
		ec.PodIPs = s.Sandbox.IPs
	}
	env, err := ResolveEnv(ctx, s.Pod, c, ec)
	if err != nil {
		return ContainerSpec{}, err
	}
	vals := EnvMap(env)
	expand := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := make([]string, len(in))
		for i, a := range in {
			out[i] = Expand(a, vals)
		}
		return out
	}
	id, err := newID()
	if err != nil {
		return ContainerSpec{}, err
	}
	spec := ContainerSpec{
		ID: id,
		Labels: map[string]string{
			LabelPodUID:        string(s.Pod.UID),
			LabelPodName:       s.Pod.Name,
			LabelPodNamespace:  s.Pod.Namespace,
			LabelContainerName: c.Name,
			LabelAttempt:       strconv.Itoa(attempt),
		},
		Image:      img.Ref,
		Command:    expand(c.Command),
		Args:       expand(c.Args),
		Env:        env,
		WorkingDir: c.WorkingDir,
		Hostname:   podHostname(s.Pod),
		LogPath:    h.logPath(s.Pod, c.Name, attempt),
		Stdin:      c.Stdin,
		StdinOnce:  c.Stdin && c.StdinOnce,
		TTY:        c.TTY,
	}
	if s.Sandbox != nil {
		spec.NetNSPath = s.Sandbox.NetNSPath
	}
	spec.HostNetwork = s.Pod.Spec.HostNetwork
	// The PID namespace, as upstream's kubelet asks the CRI for it: the
	// node's with hostPID, the pod's sandbox's with shareProcessNamespace
	// (ephemeral containers too, with or without a target), else the
	// container's own, or its target's for an ephemeral container.
	spec.HostPID = s.Pod.Spec.HostPID
	spec.SharePID = !spec.HostPID && s.Pod.Spec.ShareProcessNamespace != nil && *s.Pod.Spec.ShareProcessNamespace
	if ec := EphemeralContainer(s.Pod, c.Name); ec != nil && ec.TargetContainerName != "" && !spec.HostPID && !spec.SharePID {
		target, _ := s.Latest(ec.TargetContainerName)
		if target == nil || target.State != StateRunning {
			return ContainerSpec{}, fmt.Errorf("target container %q is not running", ec.TargetContainerName)
		}
		spec.TargetID = target.ID
	}
	if spec.Mounts, err = mounts(s, c, vals); err != nil {
		return ContainerSpec{}, err
	}
	if spec.LogPath != "" {
		spec.Labels[LabelLogPath] = spec.LogPath
	}
	if c.TerminationMessagePath != "" && h.PodsDir != "" && !mountsPath(c, filepath.Clean(c.TerminationMessagePath)) {
		p, err := terminationFile(h.PodsDir, s.Pod, c.Name, id)
		if err != nil {
			return ContainerSpec{}, fmt.Errorf("creating the termination message file: %w", err)
		}
		spec.Labels[LabelTerminationMessagePath] = p
		spec.Mounts = append(spec.Mounts, Mount{Source: p, Destination: c.TerminationMessagePath})
	}
	spec.Security = SecurityFor(s.Pod, c)
	spec.MemoryLimit, spec.CPUShares, spec.CPUQuota, spec.CPUPeriod = CgroupResources(c.Resources)
	spec.CgroupParent = s.CgroupParent
	return spec, nil
}

// mounts are the container's volume mounts on the host; env is the
// container's environment, which subPathExpr expands. A subPath is
// checked as upstream checks it (relative, no '..') and created in the
// volume, with the volume's mode, when missing.
func mounts(s *State, c *corev1.Container, env map[string]string) ([]Mount, error) {
	var out []Mount
	for _, vm := range c.VolumeMounts {
		vol, ok := s.Volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume %q is not set up", vm.Name)
		}
		src := vol.Path
		subPath := vm.SubPath
		if vm.SubPathExpr != "" {
			var err error
			if subPath, err = ExpandSubPath(vm.SubPathExpr, env); err != nil {
				return nil, err
			}
		}
		if subPath != "" {
			if err := CheckSubPath(subPath); err != nil {
				return nil, err
			}
			src = filepath.Join(src, subPath)
			if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
				if err := makeSubPath(vol.Path, src); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, Mount{Source: src, Destination: vm.MountPath, ReadOnly: vm.ReadOnly || vol.ReadOnly})
	}
	for _, m := range s.EtcMounts {
		if !mountsPath(c, m.Destination) {
			out = append(out, m)
		}
	}
	return out, nil
}

// ExpandSubPath expands the $(NAME) references of a subPathExpr with the
// container's environment; a name that is not set, or is empty, is an
// error, as upstream's.
func ExpandSubPath(expr string, env map[string]string) (string, error) {
	var missing []string
	out := expand(expr, func(name string) (string, bool) {
		v := env[name]
		if v == "" && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v, true
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("missing value for %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// CheckSubPath refuses an absolute subPath and one with a '..' element,
// with upstream's messages.
func CheckSubPath(p string) error {
	if filepath.IsAbs(p) {
		return fmt.Errorf("error SubPath `%s` must not be an absolute path", p)
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", p)
		}
	}
	return nil
}

// makeSubPath creates a subPath directory in a volume with the mode of
// the volume's root, as upstream (an emptyDir's subPath is world-writable
// as the emptyDir is).
func makeSubPath(root, dir string) error {
	perm := os.FileMode(0o755)
	if fi, err := os.Stat(root); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	return os.Chmod(dir, perm)
}

// mountsPath says whether the container mounts a volume at path itself.
func mountsPath(c *corev1.Container, path string) bool {
	for _, vm := range c.VolumeMounts {
		if filepath.Clean(vm.MountPath) == path {
			return true
		}
	}
	return false
}

// CgroupResources maps a container's resources to cgroup settings as
// upstream does: memory limit in bytes; cpu.shares from the cpu request
// (the limit when there is no request; at least 2); the CFS quota from the
// cpu limit over a 100 ms period (at least 1 ms).
func CgroupResources(r corev1.ResourceRequirements) (memory int64, shares uint64, quota int64, period uint64) {
	if q, ok := r.Limits[corev1.ResourceMemory]; ok {
		memory = q.Value()
	}
	milli := int64(0)
	if q, ok := r.Requests[corev1.ResourceCPU]; ok {
		milli = q.MilliValue()
	} else if q, ok := r.Limits[corev1.ResourceCPU]; ok {
		milli = q.MilliValue()
	}
	shares = cm.MilliCPUToShares(milli)
	if q, ok := r.Limits[corev1.ResourceCPU]; ok {
		quota, period = cm.MilliCPUToQuota(q.MilliValue()), cm.QuotaPeriod
	}
	return memory, shares, quota, period
}

func newID() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Destroy stops every container of the pod within the grace period, in
// parallel, and removes them.
func (h *ContainersHook) Destroy(ctx context.Context, s *State) error {
	all, err := h.Runtime.ListContainers(ctx, s.Pod.UID)
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, c := range all {
		if c.PodUID() != s.Pod.UID {
			continue
		}
		wg.Add(1)
		go func(c Container) {
			defer wg.Done()
			if err := h.stopAndRemove(ctx, s, c); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	if len(errs) == 0 {
		if err := h.removeSandbox(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && h.LogDir != "" {
		if err := os.RemoveAll(filepath.Join(h.LogDir, string(s.Pod.UID))); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Release stops the pod's running containers within the grace period, in
// parallel, and keeps them and their logs: a finished pod's containers
// are read by `kubectl logs` until the pod is deleted.
func (h *ContainersHook) Release(ctx context.Context, s *State) error {
	all, err := h.Runtime.ListContainers(ctx, s.Pod.UID)
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, c := range all {
		if c.PodUID() != s.Pod.UID || c.State != StateRunning {
			continue
		}
		wg.Add(1)
		go func(c Container) {
			defer wg.Done()
			h.event(s.Pod, corev1.EventTypeNormal, "Killing", "Stopping container "+c.Name())
			if err := h.Handlers.StopContainer(ctx, h.Runtime, h.Recorder, s, c, s.GracePeriod); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("stopping container %s: %w", c.Name(), err))
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	if len(errs) == 0 {
		if err := h.removeSandbox(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeSandbox removes the pod's sandbox (pause) container, once its
// containers are stopped: it holds a pod with shareProcessNamespace's PID
// namespace, and killing it first would kill them without their grace
// period. (The runtime also removes it with the last container that
// joined it, which is how a pod torn down as an orphan, whose spec is not
// known, loses it.)
func (h *ContainersHook) removeSandbox(ctx context.Context, s *State) error {
	if s.Pod.Spec.ShareProcessNamespace == nil || !*s.Pod.Spec.ShareProcessNamespace {
		return nil
	}
	if err := h.Runtime.RemoveContainer(ctx, SandboxID(s.Pod.UID)); err != nil {
		return fmt.Errorf("removing the pod's sandbox container: %w", err)
	}
	return nil
}

// remove removes an exited container, its log file and its termination
// message file.
func (h *ContainersHook) remove(ctx context.Context, s *State, c Container) error {
	if err := h.Runtime.RemoveContainer(ctx, c.ID); err != nil {
		return err
	}
	var files []string
	if h.LogDir != "" {
		files = append(files, h.logPath(s.Pod, c.Name(), c.Attempt()))
	}
	if p := c.Labels[LabelTerminationMessagePath]; p != "" && h.PodsDir != "" && strings.HasPrefix(p, h.PodsDir+string(filepath.Separator)) {
		files = append(files, p)
	}
	var errs []error
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// logPath is where the log of a container's attempt is written.
func (h *ContainersHook) logPath(pod *corev1.Pod, name string, attempt int) string {
	return filepath.Join(h.LogDir, string(pod.UID), name, strconv.Itoa(attempt)+".log")
}

func (h *ContainersHook) stopAndRemove(ctx context.Context, s *State, c Container) error {
	if c.State == StateRunning {
		h.event(s.Pod, corev1.EventTypeNormal, "Killing", "Stopping container "+c.Name())
		if err := h.Handlers.StopContainer(ctx, h.Runtime, h.Recorder, s, c, s.GracePeriod); err != nil {
			return fmt.Errorf("stopping container %s: %w", c.Name(), err)
		}
	}
	if err := h.Runtime.RemoveContainer(ctx, c.ID); err != nil {
		return fmt.Errorf("removing container %s: %w", c.Name(), err)
	}
	return nil
}

// GracePeriod is how long a pod's containers get between SIGTERM and
// SIGKILL: the deletion's grace period, else the spec's, else 30 s.
func GracePeriod(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}
