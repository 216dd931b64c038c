package pod

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
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
}

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
	adopted   bool // the pod had containers when the worker first looked
	terminal  bool
	running   atomic.Bool
}

// NewWorker returns a worker for pod.
func NewWorker(cfg *WorkerConfig, pod *corev1.Pod) *Worker {
	w := &Worker{cfg: cfg, pod: pod, notify: make(chan struct{}, 1), state: NewState(pod)}
	w.firstSeen = w.now()
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
	w.mu.Unlock()
	w.poke()
}

// Remove tells the worker its pod is gone from the API.
func (w *Worker) Remove() {
	w.mu.Lock()
	w.removed = true
	w.mu.Unlock()
	w.poke()
}

func (w *Worker) poke() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// Running says the pod's containers all run.
func (w *Worker) Running() bool { return w.running.Load() }

// Run syncs the pod until it is torn down (then it returns true) or ctx
// ends (then the containers are left running, to be adopted by the next
// kubelet, and it returns false).
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
	w.mu.Lock()
	pod, removed := w.pod, w.removed
	w.mu.Unlock()
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "podUID", pod.UID)
	ctx = klog.NewContext(ctx, logger)
	s := w.state
	s.Pod, s.Now = pod, w.now()

	if removed || pod.DeletionTimestamp != nil {
		return w.terminate(ctx, removed)
	}
	if w.terminal {
		return false
	}
	if phase := pod.Status.Phase; w.lastSent == nil && (phase == corev1.PodSucceeded || phase == corev1.PodFailed) {
		// Terminated before this kubelet started: never run it again, only
		// make sure nothing of it is left.
		w.finish(ctx)
		return false
	}
	if err := w.refresh(ctx); err != nil {
		logger.Error(err, "Listing the pod's containers")
		return false
	}
	if !s.Prepared {
		if err := w.cfg.Lifecycle.Prepare(ctx, s); err != nil {
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
		if err := w.cfg.Lifecycle.Run(ctx, s); err != nil {
			logger.Error(err, "Syncing the pod")
		}
		if s.Changed {
			if err := w.refresh(ctx); err != nil {
				logger.Error(err, "Listing the pod's containers")
				return false
			}
		}
	}
	status := w.computeStatus()
	w.observeStart(pod, status)
	if err := w.send(ctx, pod, status); err != nil {
		logger.Error(err, "Updating the pod status")
		return false
	}
	if status.Phase == corev1.PodSucceeded || status.Phase == corev1.PodFailed {
		w.finish(ctx)
	}
	return false
}

func (w *Worker) computeStatus() corev1.PodStatus {
	old := w.state.Pod.Status
	if w.lastSent != nil {
		old = *w.lastSent
	}
	return ComputeStatus(w.state, old, w.cfg.HostIP)
}

// refresh reads the pod's containers from the runtime.
func (w *Worker) refresh(ctx context.Context) error {
	if err := w.state.Refresh(ctx, w.cfg.Runtime); err != nil {
		return err
	}
	if !w.refreshed {
		w.refreshed, w.adopted = true, len(w.state.Containers) > 0
	}
	return nil
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

// finish releases what a pod that has terminated holds (its containers and
// network) once its final status is sent; the pod object stays.
func (w *Worker) finish(ctx context.Context) {
	if err := w.cfg.Lifecycle.Destroy(ctx, w.state); err != nil {
		klog.FromContext(ctx).Error(err, "Releasing a terminated pod; will retry")
		return
	}
	w.terminal = true
	w.running.Store(false)
}

// terminate stops the containers within the grace period, tears
// everything down and deletes the pod object.
func (w *Worker) terminate(ctx context.Context, removed bool) bool {
	logger := klog.FromContext(ctx)
	s := w.state
	s.GracePeriod = GracePeriod(s.Pod)
	logger.V(2).Info("Terminating pod", "gracePeriod", s.GracePeriod)
	w.running.Store(false)
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
