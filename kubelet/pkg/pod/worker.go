package pod

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/component-base/tracing"
)

// StatusWriter sends a pod's status and removes the pod object.
type StatusWriter interface {
	// UpdateStatus writes status to the pods/status subresource.
	UpdateStatus(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) error
	// Delete deletes the pod object with grace period 0, on the
	// condition that its UID is still pod's.
	Delete(ctx context.Context, pod *corev1.Pod) error
}

// WorkerConfig is what every worker shares.
type WorkerConfig struct {
	Lifecycle *Lifecycle
	Runtime   Runtime
	Status    StatusWriter
	// HostIP is the node's address.
	HostIP string
	// SyncPeriod is how often a pod is synced without updates (to see
	// exits and end back-offs); 1 s as upstream's PLEG relist.
	SyncPeriod time.Duration
	// OnStarted, when set, is told how long a pod took from the worker's
	// first sight of it to all its containers running (d), and upstream's
	// start SLI: from the pod's creation to all its containers running,
	// less the time spent pulling images (sli; 0 when the pod has no
	// creation time).
	OnStarted func(pod *corev1.Pod, d, sli time.Duration)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Recorder records the worker's events (DeadlineExceeded); may be nil.
	Recorder record.EventRecorder
	// Containers, when set, is the kubelet's PLEG: the workers read their
	// containers from its last relist when that relist began after their
	// own last change to them, and ask the runtime only otherwise.
	Containers ContainerCache
	// Tracer, when set, makes each sync of a pod until its start is seen,
	// and each sync of its termination, a SyncPod span naming the pod:
	// the path's steps, not the steady state's once-a-second syncs.
	Tracer trace.Tracer
}

// ContainerCache holds the pods' containers as the last relist of the
// runtime saw them (the PLEG).
type ContainerCache interface {
	// Containers returns the pod's containers from a relist that began
	// after `after`; ok is false when there is none yet.
	Containers(uid types.UID, after time.Time) (cs []Container, ok bool)
}

// The reason and message of a pod that ran past its
// activeDeadlineSeconds, as upstream's.
const (
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// Worker runs one pod. Update and Remove feed it; Run is its goroutine.
type Worker struct {
	cfg *WorkerConfig

	mu      sync.Mutex
	pod     *corev1.Pod
	removed bool
	notify  chan struct{}

	state     *State
	lastSent  *corev1.PodStatus
	firstSeen time.Time
	started   bool // the pod start was observed (or the pod was adopted running)
	refreshed bool // the containers were listed at least once
	// wrote is when the worker last finished a sync that may have changed
	// its containers: a cached listing must be newer to be used.
	wrote    time.Time
	adopted  bool // the pod had containers when the worker first looked
	terminal bool
	finished bool // terminal, as Finished reports it
	running  atomic.Bool
	// evicting is the eviction asked for, nil if none.
	evicting *Eviction
	// interrupt cuts the sync in flight short, nil when none is in
	// flight or the one in flight is terminating the pod.
	interrupt context.CancelCauseFunc
	// shorten cuts short the termination in flight, whose grace period
	// is terminatingGrace, when a later deletion shortens it; nil when
	// no termination of a deleted pod is in flight.
	shorten          context.CancelCauseFunc
	terminatingGrace time.Duration
}

// errPodTerminating is the cause of a sync's context cut short because
// its pod began terminating (deleted, removed from the API or evicted),
// as upstream's pod workers cancel the in-flight sync of a pod that
// becomes terminating: a postStart hook (or an image pull) does not hold
// its termination back.
var errPodTerminating = errors.New("the pod is terminating")

// interrupted says ctx was cut short because its pod began terminating:
// what failed because of it is not the pod's failure (no event, no
// back-off, no restart).
func interrupted(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errPodTerminating)
}

// interruptLocked cuts the sync in flight short (w.mu held).
func (w *Worker) interruptLocked() {
	if w.interrupt != nil {
		w.interrupt(errPodTerminating)
	}
}

// errGraceShortened is the cause of a termination's context cut short
// because a later deletion shortened the pod's grace period: as upstream's
// pod workers (UpdatePod, calculateEffectiveGracePeriod), the termination
// starts again and stops the containers within the shorter period.
var errGraceShortened = errors.New("the pod's grace period was shortened")

func graceShortened(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errGraceShortened)
}

// Eviction is the kubelet evicting a pod under node pressure: its
// containers are stopped within GracePeriod and it ends Failed with
// Reason and Message, and Condition added.
type Eviction struct {
	Reason, Message string
	GracePeriod     time.Duration
	Condition       *corev1.PodCondition
	done            chan struct{}
}

// NewWorker returns a worker for pod.
func NewWorker(cfg *WorkerConfig, pod *corev1.Pod) *Worker {
	w := &Worker{cfg: cfg, pod: pod, notify: make(chan struct{}, 1), state: NewState(pod)}
	w.firstSeen = w.now()
	w.wrote = time.Now()
	return w
}

func (w *Worker) now() time.Time {
	if w.cfg.Now != nil {
		return w.cfg.Now()
	}
	return time.Now()
}

// Update hands the worker a newer version of its pod.
func (w *Worker) Update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod
	if pod.DeletionTimestamp != nil {
		w.interruptLocked()
		if w.shorten != nil && GracePeriod(pod) < w.terminatingGrace {
			w.shorten(errGraceShortened)
		}
	}
	w.mu.Unlock()
	w.poke()
}

// Remove tells the worker its pod is gone from the API.
func (w *Worker) Remove() {
	w.mu.Lock()
	w.removed = true
	w.interruptLocked()
	w.mu.Unlock()
	w.poke()
}

func (w *Worker) poke() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// Evict asks the worker to evict its pod; the channel is closed once the
// pod's containers are gone and its final status is sent. A pod already
// finished is not evicted (the channel is closed at once).
func (w *Worker) Evict(e Eviction) <-chan struct{} {
	e.done = make(chan struct{})
	w.mu.Lock()
	if w.evicting != nil {
		done := w.evicting.done
		w.mu.Unlock()
		return done
	}
	w.evicting = &e
	w.interruptLocked()
	w.mu.Unlock()
	w.poke()
	return e.done
}

// Pod is the worker's latest version of its pod (do not modify it).
func (w *Worker) Pod() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

// Finished says the pod has terminated here (succeeded, failed or
// evicted) and runs no containers any more (a succeeded or failed pod
// keeps its exited ones until it is deleted; an evicted pod does not).
func (w *Worker) Finished() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.finished
}

// Running says the pod's containers all run.
func (w *Worker) Running() bool { return w.running.Load() }

// Poke makes the worker sync now (the PLEG saw its containers change).
func (w *Worker) Poke() { w.poke() }

// Run syncs the pod until it is torn down (then it returns true) or ctx
// ends (then the containers are left running, to be adopted by the next
// kubelet, and it returns false). It syncs when its pod is updated, when
// the PLEG sees its containers change, and every SyncPeriod (for probes,
// back-offs and deadlines).
func (w *Worker) Run(ctx context.Context) bool {
	period := w.cfg.SyncPeriod
	if period <= 0 {
		period = time.Second
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if w.Sync(ctx) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-w.notify:
		case <-t.C:
		}
	}
}

// Sync does one round for the pod; it returns true when the pod is gone
// and the worker is done.
func (w *Worker) Sync(ctx context.Context) bool {
	clean := false
	defer func() {
		// A sync that may have created, started, stopped or removed
		// containers: the next one reads them from a relist begun after
		// now, or from the runtime.
		if !clean {
			w.wrote = time.Now()
		}
	}()
	return w.sync(ctx, &clean)
}

func (w *Worker) sync(ctx context.Context, clean *bool) bool {
	w.mu.Lock()
	pod, removed, evicting := w.pod, w.removed, w.evicting
	// The hooks of a sync that is not terminating the pod (its
	// preparation, image pulls, container starts and their postStart
	// hooks, probes) run with hctx, cut short when the pod begins
	// terminating (Update, Remove, Evict), as upstream's UpdatePod
	// cancels the sync in flight; the next sync terminates the pod.
	hctx := ctx
	if !removed && pod.DeletionTimestamp == nil && evicting == nil {
		var cancel context.CancelCauseFunc
		hctx, cancel = context.WithCancelCause(ctx)
		w.interrupt = cancel
		defer func() {
			w.mu.Lock()
			w.interrupt = nil
			w.mu.Unlock()
			cancel(nil)
		}()
	}
	if !removed && pod.DeletionTimestamp != nil && !w.terminal {
		// The termination of a deleted pod runs with a context that a
		// later deletion with a shorter grace period cuts short (Update);
		// the next sync then stops the containers within the shorter one.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		w.shorten, w.terminatingGrace = cancel, GracePeriod(pod)
		defer func() {
			w.mu.Lock()
			w.shorten = nil
			w.mu.Unlock()
			cancel(nil)
		}()
	}
	w.mu.Unlock()
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "podUID", pod.UID)
	ctx, hctx = klog.NewContext(ctx, logger), klog.NewContext(hctx, logger)
	if w.cfg.Tracer != nil && (!w.started || removed || pod.DeletionTimestamp != nil) {
		var span trace.Span
		ctx, span = w.cfg.Tracer.Start(ctx, "SyncPod", trace.WithAttributes(tracing.PodAttributes(pod)...))
		hctx = trace.ContextWithSpan(hctx, span)
		defer span.End()
	}
	s := w.state
	s.Pod, s.Now = pod, w.now()

	if removed || pod.DeletionTimestamp != nil {
		return w.terminate(ctx, removed)
	}
	if w.terminal {
		if evicting != nil {
			closeOnce(evicting.done)
		}
		return false
	}
	if evicting != nil {
		w.evict(ctx, evicting)
		return false
	}
	if phase := pod.Status.Phase; w.lastSent == nil && (phase == corev1.PodSucceeded || phase == corev1.PodFailed) {
		// Terminated before this kubelet started: never run it again, only
		// make sure nothing of it is left.
		w.finish(ctx)
		return false
	}
	if err := w.refreshCached(ctx); err != nil {
		logger.Error(err, "Listing the pod's containers")
		return false
	}
	if w.pastActiveDeadline(pod) {
		w.deadlineExceeded(ctx)
		return false
	}
	wasPrepared := s.Prepared
	if !s.Prepared {
		if err := w.cfg.Lifecycle.Prepare(hctx, s); interrupted(hctx) {
			logger.V(2).Info("Sync cut short: the pod is terminating", "err", err)
			return false
		} else if err != nil {
			logger.Info("Preparing the pod failed; will retry", "err", err)
			if len(s.Containers) > 0 {
				// Adopted containers: do not report a status that lacks
				// what is not prepared again yet (the pod IP).
				return false
			}
		}
	}
	if s.Prepared {
		s.Changed = false
		if err := w.cfg.Lifecycle.Run(hctx, s); interrupted(hctx) {
			// What the sync started (a container whose postStart hook
			// was cut) is stopped by the termination, with its preStop
			// hook and grace period; no status from a sync cut short.
			logger.V(2).Info("Sync cut short: the pod is terminating", "err", err)
			return false
		} else if errors.Is(err, ErrSandboxLost) {
			logger.Info("Pod sandbox changed, it will be killed and re-created", "err", err)
			w.stopRunning(ctx)
			s.Changed = true
		} else if err != nil {
			logger.Error(err, "Syncing the pod")
		}
		if s.Changed {
			if err := w.refresh(ctx); err != nil {
				logger.Error(err, "Listing the pod's containers")
				return false
			}
		}
	}
	s.ReadTerminationMessages(ctx)
	status := w.computeStatus()
	w.observeStart(pod, status)
	if err := w.send(ctx, pod, status); err != nil {
		logger.Error(err, "Updating the pod status")
		return false
	}
	if status.Phase == corev1.PodSucceeded || status.Phase == corev1.PodFailed {
		w.finish(ctx)
		return false
	}
	*clean = wasPrepared && !s.Changed
	return false
}

func (w *Worker) computeStatus() corev1.PodStatus {
	old := w.state.Pod.Status
	if w.lastSent != nil {
		old = *w.lastSent
	}
	return ComputeStatus(w.state, old, w.cfg.HostIP)
}

// refreshCached reads the pod's containers from the PLEG's last relist
// when it began after the worker's last change to them, else from the
// runtime.
func (w *Worker) refreshCached(ctx context.Context) error {
	if w.cfg.Containers != nil {
		if cs, ok := w.cfg.Containers.Containers(w.state.Pod.UID, w.wrote); ok {
			w.state.Containers = cs
			w.noteRefreshed()
			return nil
		}
	}
	return w.refresh(ctx)
}

// refresh reads the pod's containers from the runtime.
func (w *Worker) refresh(ctx context.Context) error {
	if err := w.state.Refresh(ctx, w.cfg.Runtime); err != nil {
		return err
	}
	w.noteRefreshed()
	return nil
}

func (w *Worker) noteRefreshed() {
	if !w.refreshed {
		w.refreshed, w.adopted = true, len(w.state.Containers) > 0
	}
}

func (w *Worker) observeStart(pod *corev1.Pod, st corev1.PodStatus) {
	all := len(st.ContainerStatuses) > 0
	for _, cs := range st.ContainerStatuses {
		all = all && cs.State.Running != nil
	}
	w.running.Store(all)
	if w.started || !all {
		return
	}
	w.started = true
	// A pod that had containers when first seen was adopted, not started.
	if !w.adopted && w.cfg.OnStarted != nil {
		now := w.now()
		var sli time.Duration
		if !pod.CreationTimestamp.IsZero() {
			sli = now.Sub(pod.CreationTimestamp.Time) - w.state.LastPullFinished.Sub(w.state.FirstPullStarted)
		}
		w.cfg.OnStarted(pod, now.Sub(w.firstSeen), sli)
	}
}

// send writes the status when it differs from what was last sent.
func (w *Worker) send(ctx context.Context, pod *corev1.Pod, st corev1.PodStatus) error {
	if w.lastSent != nil && apiequality.Semantic.DeepEqual(*w.lastSent, st) {
		return nil
	}
	if w.lastSent == nil && apiequality.Semantic.DeepEqual(pod.Status, st) {
		w.lastSent = &st
		return nil
	}
	if err := w.cfg.Status.UpdateStatus(ctx, pod, st); err != nil {
		return err
	}
	w.lastSent = &st
	return nil
}

// finish releases what a pod that has terminated holds (its running
// processes, network, cgroup and volumes) once its final status is sent;
// the pod object, its exited containers and their logs stay until the pod
// is deleted, as upstream's.
func (w *Worker) finish(ctx context.Context) {
	w.state.GracePeriod = GracePeriod(w.state.Pod)
	if err := w.cfg.Lifecycle.Release(ctx, w.state); err != nil {
		klog.FromContext(ctx).Error(err, "Releasing a terminated pod; will retry")
		return
	}
	w.setTerminal()
}

// stopRunning stops the pod's running containers within its grace period,
// in parallel, and keeps them: their exits decide the restarts, and their
// states are the next ones' last states.
func (w *Worker) stopRunning(ctx context.Context) {
	s := w.state
	grace := GracePeriod(s.Pod)
	var wg sync.WaitGroup
	for _, c := range s.Containers {
		if c.State != StateRunning {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.cfg.Runtime.StopContainer(ctx, c.ID, grace); err != nil {
				klog.FromContext(ctx).Error(err, "Stopping a container cut off from the network", "container", c.Name())
			}
		}()
	}
	wg.Wait()
}

func (w *Worker) setTerminal() {
	w.terminal = true
	w.running.Store(false)
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
}

// evict stops the pod's containers within the eviction's grace period,
// releases what the pod holds, and sends its final status: Failed, with
// the eviction's reason, message and condition, as upstream's kubelet
// leaves an evicted pod.
func (w *Worker) evict(ctx context.Context, e *Eviction) {
	logger := klog.FromContext(ctx)
	s := w.state
	status := w.computeStatus()
	s.GracePeriod = e.GracePeriod
	w.running.Store(false)
	if err := w.cfg.Lifecycle.Destroy(ctx, s); err != nil {
		logger.Error(err, "Evicting the pod; will retry")
		return
	}
	status = evictedStatus(status, e, s.Now)
	if err := w.send(ctx, s.Pod, status); err != nil {
		logger.Error(err, "Updating the status of an evicted pod; will retry")
		return
	}
	logger.Info("Evicted pod", "reason", e.Reason, "message", e.Message)
	w.setTerminal()
	closeOnce(e.done)
}

// evictedStatus is the final status of an evicted pod (or of one past its
// active deadline): every container that ran is terminated (killed: exit
// code 137), nothing is ready.
func evictedStatus(st corev1.PodStatus, e *Eviction, now time.Time) corev1.PodStatus {
	st = *st.DeepCopy()
	st.Phase, st.Reason, st.Message = corev1.PodFailed, e.Reason, e.Message
	finished := metav1.NewTime(now)
	kill := func(list []corev1.ContainerStatus) {
		for i := range list {
			cs := &list[i]
			cs.Ready, cs.Started = false, ptr.To(false)
			if cs.State.Running != nil {
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "Error", StartedAt: cs.State.Running.StartedAt, FinishedAt: finished, ContainerID: cs.ContainerID,
				}}
			}
		}
	}
	kill(st.ContainerStatuses)
	kill(st.InitContainerStatuses)
	for i := range st.Conditions {
		if t := st.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
			if st.Conditions[i].Status != corev1.ConditionFalse {
				st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = corev1.ConditionFalse, finished
			}
			st.Conditions[i].Reason = "PodFailed"
		}
	}
	if e.Condition != nil {
		c := *e.Condition
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = finished
		}
		st.Conditions = append(st.Conditions, c)
	}
	return st
}

// terminatedStatus is the final status of a pod whose containers were
// stopped because it is being deleted, as upstream's getPhase for a
// terminal pod: Succeeded when every container that ran exited 0, else
// Failed (whatever the restart policy); a container still running is
// counted as killed; nothing is ready. A phase already terminal stays. A
// container the runtime no longer shows keeps its state of prev (the
// status last written): a terminated state may not go back to another.
func terminatedStatus(st, prev corev1.PodStatus, now time.Time) corev1.PodStatus {
	if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return st
	}
	st = *st.DeepCopy()
	finished := metav1.NewTime(now)
	succeeded := len(st.ContainerStatuses) > 0
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.Ready, cs.Started = false, ptr.To(false)
		if cs.State.Terminated == nil && cs.LastTerminationState.Terminated == nil {
			for _, p := range prev.ContainerStatuses {
				if p.Name == cs.Name && (p.State.Terminated != nil || p.State.Running != nil) {
					cs.State, cs.ContainerID = p.State, p.ContainerID
				}
			}
		}
		switch {
		case cs.State.Running != nil:
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", StartedAt: cs.State.Running.StartedAt, FinishedAt: finished, ContainerID: cs.ContainerID,
			}}
			succeeded = false
		case cs.State.Terminated != nil:
			succeeded = succeeded && cs.State.Terminated.ExitCode == 0
		case cs.LastTerminationState.Terminated != nil:
			// Stopped, waiting for a restart that will not come: its
			// exit is its final state.
			cs.State, cs.LastTerminationState = cs.LastTerminationState, corev1.ContainerState{}
			succeeded = succeeded && cs.State.Terminated.ExitCode == 0
		default:
			// Never started (waiting): upstream counts it as failed.
			succeeded = false
		}
	}
	st.Phase = corev1.PodFailed
	if succeeded {
		st.Phase = corev1.PodSucceeded
	}
	reason := "PodFailed"
	if succeeded {
		reason = "PodCompleted"
	}
	for i := range st.Conditions {
		if t := st.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
			if st.Conditions[i].Status != corev1.ConditionFalse {
				st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = corev1.ConditionFalse, finished
			}
			st.Conditions[i].Reason = reason
		}
	}
	return st
}

// pastActiveDeadline says the pod has been active here (since its
// startTime) for its activeDeadlineSeconds or longer.
func (w *Worker) pastActiveDeadline(pod *corev1.Pod) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return false
	}
	start := pod.Status.StartTime
	if w.lastSent != nil {
		start = w.lastSent.StartTime
	}
	if start == nil || start.IsZero() {
		return false
	}
	return w.state.Now.Sub(start.Time) >= time.Duration(*pod.Spec.ActiveDeadlineSeconds)*time.Second
}

// deadlineExceeded ends a pod that ran past its activeDeadlineSeconds, as
// upstream's kubelet: its containers are killed within the grace period
// (their preStop hooks run) and kept, what it holds is released, and it
// ends Failed with reason DeadlineExceeded.
func (w *Worker) deadlineExceeded(ctx context.Context) {
	logger := klog.FromContext(ctx)
	s := w.state
	status := w.computeStatus()
	if w.cfg.Recorder != nil {
		w.cfg.Recorder.Event(s.Pod, corev1.EventTypeNormal, ReasonDeadlineExceeded, MessageDeadlineExceeded)
	}
	s.GracePeriod = GracePeriod(s.Pod)
	w.running.Store(false)
	if err := w.cfg.Lifecycle.Release(ctx, s); err != nil {
		logger.Error(err, "Killing a pod past its active deadline; will retry")
		return
	}
	status = evictedStatus(status, &Eviction{Reason: ReasonDeadlineExceeded, Message: MessageDeadlineExceeded}, s.Now)
	if err := w.send(ctx, s.Pod, status); err != nil {
		logger.Error(err, "Updating the status of a pod past its active deadline; will retry")
		return
	}
	logger.Info("Pod was active longer than its deadline", "activeDeadlineSeconds", *s.Pod.Spec.ActiveDeadlineSeconds)
	w.setTerminal()
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// terminate stops the containers within the grace period, tears
// everything down and deletes the pod object.
func (w *Worker) terminate(ctx context.Context, removed bool) bool {
	logger := klog.FromContext(ctx)
	s := w.state
	s.GracePeriod = GracePeriod(s.Pod)
	logger.V(2).Info("Terminating pod", "gracePeriod", s.GracePeriod)
	w.running.Store(false)
	if !removed && !w.terminal {
		// As upstream's kubelet: the containers stop within the grace
		// period, then the pod's final status (terminal phase, the
		// containers' exits) is written before the object goes, so that
		// what waits on it (a Job's finalizer, its pod failure policy)
		// sees how the pod ended.
		if err := w.cfg.Lifecycle.Release(ctx, s); graceShortened(ctx) {
			// The next sync (the update that shortened it woke the
			// worker) stops the containers again within the new period.
			logger.V(2).Info("Grace period shortened: stopping the pod again", "was", s.GracePeriod, "err", err)
			return false
		} else if err != nil {
			// What failed is retried by the teardown below.
			logger.Error(err, "Stopping the pod")
		}
		if err := w.refresh(ctx); err != nil {
			logger.Error(err, "Listing the pod's containers")
			return false
		}
		prev := s.Pod.Status
		if w.lastSent != nil {
			prev = *w.lastSent
		}
		if err := w.send(ctx, s.Pod, terminatedStatus(w.computeStatus(), prev, s.Now)); err != nil {
			logger.Error(err, "Updating the final status of a pod being deleted; will retry")
			return false
		}
		w.setTerminal()
	}
	if err := w.cfg.Lifecycle.Destroy(ctx, s); err != nil {
		logger.Error(err, "Tearing down the pod; will retry")
		return false
	}
	if removed {
		return true
	}
	if err := w.cfg.Status.Delete(ctx, s.Pod); err != nil {
		logger.Error(err, "Deleting the pod object; will retry")
		return false
	}
	logger.V(2).Info("Pod deleted")
	return true
}
