package eviction

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Upstream's timings around an eviction.
const (
	// EvictionGracePeriodSeconds is the grace period of a pod evicted for
	// a hard threshold (upstream's immediateEvictionGracePeriodSeconds).
	EvictionGracePeriodSeconds int64 = 1
	podCleanupTimeout                = 30 * time.Second
	podCleanupPollFreq               = time.Second
)

// Eviction is what the Evict callback is asked to do: kill the pod with
// GracePeriodSeconds and set its status to phase Failed, Reason, Message,
// and add Condition (DisruptionTarget, TerminationByKubelet).
type Eviction struct {
	Signal             Signal
	Reason             string
	Message            string
	Annotations        map[string]string
	GracePeriodSeconds int64
	Condition          corev1.PodCondition
}

// Options configure a Manager. Signals, ActivePods, PodUsage and Evict are
// required.
type Options struct {
	Thresholds               []Threshold
	PressureTransitionPeriod time.Duration
	Signals                  Signals
	// ActivePods returns the pods that run on the node and are not
	// terminating.
	ActivePods func() []*corev1.Pod
	// PodUsage returns what a pod uses, false when unknown.
	PodUsage func(ctx context.Context, pod *corev1.Pod) (PodUsage, bool)
	// Evict kills the pod; it returns when the pod's containers are gone
	// or the kill failed.
	Evict func(ctx context.Context, pod *corev1.Pod, e Eviction) error
	// DeleteUnusedContainers removes exited containers (optional).
	DeleteUnusedContainers func(ctx context.Context) error
	// DeleteUnusedImages removes images no container uses (optional).
	DeleteUnusedImages func(ctx context.Context) error
	// PodCleanedUp tells whether an evicted pod's resources are released;
	// when set, Start waits for it (up to 30 s) after an eviction.
	PodCleanedUp func(pod *corev1.Pod) bool
	// Recorder gets a Warning event "Evicted" on the evicted pod (optional).
	Recorder record.EventRecorder
	Metrics  *Metrics
	Clock    clock.WithTicker
	// Interval is the time between passes (MonitoringInterval if 0).
	Interval time.Duration
}

// Manager is the eviction manager.
type Manager struct {
	o Options

	mu             sync.RWMutex
	conditions     []corev1.NodeConditionType
	lastObservedAt map[corev1.NodeConditionType]time.Time
}

// New checks the options and returns a Manager.
func New(o Options) (*Manager, error) {
	if o.Signals == nil || o.ActivePods == nil || o.PodUsage == nil || o.Evict == nil {
		return nil, errors.New("eviction: Signals, ActivePods, PodUsage and Evict are required")
	}
	if o.PressureTransitionPeriod < 0 {
		return nil, fmt.Errorf("eviction: negative pressure transition period %v", o.PressureTransitionPeriod)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Interval <= 0 {
		o.Interval = MonitoringInterval
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	return &Manager{o: o, lastObservedAt: map[corev1.NodeConditionType]time.Time{}}, nil
}

// Start synchronizes every Interval until ctx ends. After an eviction it
// waits for the pod to be cleaned up instead.
func (m *Manager) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("eviction")
	ctx = klog.NewContext(ctx, logger)
	for {
		evicted, err := m.Synchronize(ctx)
		if err != nil {
			logger.Error(err, "Eviction manager: failed to synchronize")
		}
		if evicted != nil && m.o.PodCleanedUp != nil {
			m.waitForCleanup(ctx, evicted)
		} else {
			select {
			case <-ctx.Done():
			case <-m.o.Clock.After(m.o.Interval):
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (m *Manager) waitForCleanup(ctx context.Context, pod *corev1.Pod) {
	deadline := m.o.Clock.Now().Add(podCleanupTimeout)
	for !m.o.PodCleanedUp(pod) {
		if !m.o.Clock.Now().Before(deadline) {
			klog.FromContext(ctx).Info("Eviction manager: timed out waiting for pods to be cleaned up", "pod", klog.KObj(pod))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-m.o.Clock.After(podCleanupPollFreq):
		}
	}
	klog.FromContext(ctx).Info("Eviction manager: pods successfully cleaned up", "pod", klog.KObj(pod))
}

// Synchronize is one pass: observe, update the conditions and, when a
// threshold is met, reclaim node-level resources or evict one pod. It
// returns the evicted pod, if any.
func (m *Manager) Synchronize(ctx context.Context) (*corev1.Pod, error) {
	if len(m.o.Thresholds) == 0 {
		return nil, nil
	}
	logger := klog.FromContext(ctx)
	obs, err := m.o.Signals.Observe(ctx)
	if err != nil {
		return nil, fmt.Errorf("observing eviction signals: %w", err)
	}
	met := thresholdsMet(m.o.Thresholds, obs)
	m.updateConditions(met)
	if len(met) == 0 {
		return nil, nil
	}
	th := pickThreshold(met)
	res := signalResource[th.Signal]
	logger.Info("Eviction manager: attempting to reclaim", "resourceName", res)
	if m.reclaimNodeLevel(ctx, th.Signal, obs.DedicatedImageFS) {
		logger.Info("Eviction manager: able to reduce resource pressure without evicting pods.", "resourceName", res)
		return nil, nil
	}
	pods := m.o.ActivePods()
	if len(pods) == 0 {
		logger.Error(nil, "Eviction manager: eviction thresholds have been met, but no pods are active to evict")
		return nil, nil
	}
	usage := func(p *corev1.Pod) (PodUsage, bool) { return m.o.PodUsage(ctx, p) }
	ranked := append([]*corev1.Pod(nil), pods...)
	rankFuncs(obs.DedicatedImageFS)[th.Signal](ranked, usage)
	for _, pod := range ranked {
		if m.evict(ctx, pod, th, res, usage, met, obs) {
			return pod, nil
		}
	}
	logger.Info("Eviction manager: unable to evict any pods from the node")
	return nil, nil
}

// thresholdsMet are the thresholds whose signal is below its quantity.
func thresholdsMet(thresholds []Threshold, obs Observations) []Threshold {
	var met []Threshold
	for _, t := range thresholds {
		o, ok := obs.Signals[t.Signal]
		if !ok || o.Available == nil {
			continue
		}
		if t.Value(o.Capacity).Cmp(*o.Available) > 0 {
			met = append(met, t)
		}
	}
	return met
}

// pickThreshold is the threshold to act on: memory first, then in order.
func pickThreshold(met []Threshold) Threshold {
	sorted := append([]Threshold(nil), met...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].Signal == SignalMemoryAvailable && sorted[j].Signal != SignalMemoryAvailable
	})
	return sorted[0]
}

// reclaimNodeLevel runs the reclaim functions of the signal and reports
// whether no threshold is met any more.
func (m *Manager) reclaimNodeLevel(ctx context.Context, sig Signal, dedicatedImageFS bool) bool {
	funcs := m.reclaimFuncs(sig, dedicatedImageFS)
	if len(funcs) == 0 {
		return false
	}
	logger := klog.FromContext(ctx)
	for _, f := range funcs {
		if err := f(ctx); err != nil {
			logger.Info("Eviction manager: unexpected error when attempting to reduce resource pressure", "resourceName", signalResource[sig], "err", err)
		}
	}
	obs, err := m.o.Signals.Observe(ctx)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to observe signals after reclaiming")
		return false
	}
	return len(thresholdsMet(m.o.Thresholds, obs)) == 0
}

// reclaimFuncs are upstream's node-level reclaim functions: containers
// for the node filesystem, containers then images for the image
// filesystem, and both for either when they share a filesystem.
func (m *Manager) reclaimFuncs(sig Signal, dedicatedImageFS bool) []func(context.Context) error {
	var funcs []func(context.Context) error
	add := func(f func(context.Context) error) {
		if f != nil {
			funcs = append(funcs, f)
		}
	}
	switch sig {
	case SignalNodeFsAvailable, SignalNodeFsInodesFree:
		add(m.o.DeleteUnusedContainers)
		if !dedicatedImageFS {
			add(m.o.DeleteUnusedImages)
		}
	case SignalImageFsAvailable, SignalImageFsInodesFree:
		add(m.o.DeleteUnusedContainers)
		add(m.o.DeleteUnusedImages)
	}
	return funcs
}

// evict hands pod to Evict unless it is critical; true when it was tried.
func (m *Manager) evict(ctx context.Context, pod *corev1.Pod, th Threshold, res corev1.ResourceName, usage usageFunc, met []Threshold, obs Observations) bool {
	logger := klog.FromContext(ctx)
	if IsCriticalPod(pod) {
		logger.Error(nil, "Eviction manager: cannot evict a critical pod", "pod", klog.KObj(pod))
		return false
	}
	msg, annotations := evictionMessage(res, pod, usage, met, obs)
	if m.o.Recorder != nil {
		m.o.Recorder.AnnotatedEventf(pod, annotations, corev1.EventTypeWarning, Reason, "%s", msg)
	}
	logger.V(3).Info("Evicting pod", "pod", klog.KObj(pod), "podUID", pod.UID, "message", msg)
	err := m.o.Evict(ctx, pod, Eviction{
		Signal: th.Signal, Reason: Reason, Message: msg, Annotations: annotations,
		GracePeriodSeconds: EvictionGracePeriodSeconds,
		Condition: corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: corev1.PodReasonTerminationByKubelet, Message: msg,
		},
	})
	if err != nil {
		logger.Error(err, "Eviction manager: pod failed to evict", "pod", klog.KObj(pod))
	} else {
		logger.Info("Eviction manager: pod is evicted successfully", "pod", klog.KObj(pod))
	}
	m.o.Metrics.Evictions.WithLabelValues(string(th.Signal)).Inc()
	return true
}
