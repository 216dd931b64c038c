package podgc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the controller's name, as upstream names it.
const ControllerName = "pod-garbage-collector-controller"

// Upstream's defaults.
const (
	DefaultTerminatedPodGCThreshold = 12500
	DefaultGCPeriod                 = 20 * time.Second
	DefaultQuarantineTime           = 40 * time.Second
	// TaintNodeOutOfService is the taint an operator puts on a node that is
	// down for good.
	TaintNodeOutOfService = "node.kubernetes.io/out-of-service"
)

// Options configure the collector.
type Options struct {
	// TerminatedPodGCThreshold is --terminated-pod-gc-threshold: how many
	// terminated pods may exist; 0 or less disables that part.
	TerminatedPodGCThreshold int
	// GCPeriod is how often the collector runs (upstream's 20s).
	GCPeriod time.Duration
	// QuarantineTime is how long a node must be missing from the cache
	// before it is checked and its pods deleted (upstream's 40s).
	QuarantineTime time.Duration
	// Clock is the time source; nil means the real clock.
	Clock clock.Clock
}

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{TerminatedPodGCThreshold: DefaultTerminatedPodGCThreshold, GCPeriod: DefaultGCPeriod, QuarantineTime: DefaultQuarantineTime}
}

// Controller is the pod garbage collector.
type Controller struct {
	client     kubernetes.Interface
	podLister  corelisters.PodLister
	nodeLister corelisters.NodeLister
	synced     []cache.InformerSynced
	opts       Options
	clock      clock.Clock
	metrics    *metrics.Metrics

	mu sync.Mutex
	// missingSince records when a node a pod is bound to was first seen
	// missing from the cache.
	missingSince map[string]time.Time
}

// NewController builds the collector. recorder is unused and may be nil.
func NewController(client kubernetes.Interface, podInformer coreinformers.PodInformer, nodeInformer coreinformers.NodeInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.GCPeriod <= 0 {
		opts.GCPeriod = DefaultGCPeriod
	}
	if opts.QuarantineTime < 0 {
		return nil, fmt.Errorf("pod GC: negative quarantine time %v", opts.QuarantineTime)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Controller{
		client:       client,
		podLister:    podInformer.Lister(),
		nodeLister:   nodeInformer.Lister(),
		synced:       []cache.InformerSynced{podInformer.Informer().HasSynced, nodeInformer.Informer().HasSynced},
		opts:         opts,
		clock:        clk,
		metrics:      m,
		missingSince: map[string]time.Time{},
	}, nil
}

// Run collects every period until ctx is done. workers is unused: one pass
// runs at a time.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", ControllerName)
	defer logger.Info("Shutting down controller", "controller", ControllerName)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return nil
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		start := time.Now()
		err := c.GC(ctx)
		c.metrics.ObserveSync(ControllerName, start, err)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Pod garbage collection")
		}
	}, c.opts.GCPeriod)
	return nil
}

// GC runs one pass.
func (c *Controller) GC(ctx context.Context) error {
	pods, err := c.podLister.List(labels.Everything())
	if err != nil {
		return err
	}
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	if c.opts.TerminatedPodGCThreshold > 0 {
		errs = append(errs, c.gcTerminated(ctx, pods)...)
	}
	errs = append(errs, c.gcTerminatingOutOfService(ctx, pods, nodes)...)
	errs = append(errs, c.gcOrphaned(ctx, pods, nodes)...)
	errs = append(errs, c.gcUnscheduledTerminating(ctx, pods)...)
	return errors.Join(errs...)
}

func terminated(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// gcTerminated deletes the oldest terminated pods above the threshold;
// evicted pods go first.
func (c *Controller) gcTerminated(ctx context.Context, pods []*corev1.Pod) []error {
	var done []*corev1.Pod
	for _, p := range pods {
		if terminated(p) {
			done = append(done, p)
		}
	}
	n := len(done) - c.opts.TerminatedPodGCThreshold
	if n <= 0 {
		return nil
	}
	sort.SliceStable(done, func(i, j int) bool {
		ei, ej := done[i].Status.Reason == "Evicted", done[j].Status.Reason == "Evicted"
		if ei != ej {
			return ei
		}
		ti, tj := done[i].CreationTimestamp, done[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return done[i].Namespace+"/"+done[i].Name < done[j].Namespace+"/"+done[j].Name
	})
	klog.FromContext(ctx).Info("Garbage collecting terminated pods", "count", n, "threshold", c.opts.TerminatedPodGCThreshold)
	var errs []error
	for _, p := range done[:n] {
		errs = append(errs, c.deletePod(ctx, p, "", ""))
	}
	return errs
}

// gcOrphaned deletes the pods of nodes that are gone: missing from the
// cache for the quarantine time and confirmed missing by a GET.
func (c *Controller) gcOrphaned(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) []error {
	exists := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		exists[n.Name] = true
	}
	now := c.clock.Now()
	c.mu.Lock()
	referenced := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName == "" || exists[p.Spec.NodeName] {
			continue
		}
		referenced[p.Spec.NodeName] = true
		if _, ok := c.missingSince[p.Spec.NodeName]; !ok {
			c.missingSince[p.Spec.NodeName] = now
		}
	}
	var due []string
	for name, since := range c.missingSince {
		switch {
		case !referenced[name]:
			delete(c.missingSince, name)
		case now.Sub(since) >= c.opts.QuarantineTime:
			due = append(due, name)
		}
	}
	c.mu.Unlock()

	gone := map[string]bool{}
	for _, name := range due {
		_, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			gone[name] = true
		case err == nil:
			c.mu.Lock()
			delete(c.missingSince, name)
			c.mu.Unlock()
		default:
			klog.FromContext(ctx).Error(err, "Checking whether a node exists", "node", name)
		}
	}
	var errs []error
	for _, p := range pods {
		if gone[p.Spec.NodeName] {
			klog.FromContext(ctx).Info("Garbage collecting a pod of a deleted node", "pod", klog.KObj(p), "node", p.Spec.NodeName)
			errs = append(errs, c.deletePod(ctx, p, "DeletionByPodGC", "PodGC: node no longer exists"))
		}
	}
	return errs
}

// gcUnscheduledTerminating deletes terminating pods never bound to a node:
// no kubelet will finish them.
func (c *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*corev1.Pod) []error {
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			errs = append(errs, c.deletePod(ctx, p, "DeletionByPodGC", "PodGC: node no longer exists"))
		}
	}
	return errs
}

// gcTerminatingOutOfService deletes terminating pods on nodes that are not
// Ready and carry the out-of-service taint.
func (c *Controller) gcTerminatingOutOfService(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) []error {
	out := map[string]bool{}
	for _, n := range nodes {
		if !nodeReady(n) && hasOutOfServiceTaint(n) {
			out[n.Name] = true
		}
	}
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil && out[p.Spec.NodeName] {
			errs = append(errs, c.deletePod(ctx, p, "DeletionByPodGC", "PodGC: node is out of service"))
		}
	}
	return errs
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasOutOfServiceTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == TaintNodeOutOfService && t.Effect == corev1.TaintEffectNoExecute {
			return true
		}
	}
	return false
}

// deletePod force-deletes p; when reason is set and p is not terminal, it
// first marks p Failed with the DisruptionTarget condition.
func (c *Controller) deletePod(ctx context.Context, p *corev1.Pod, reason, message string) error {
	if reason != "" && !terminated(p) {
		failed := p.DeepCopy()
		failed.Status.Phase = corev1.PodFailed
		setCondition(&failed.Status, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message,
			LastTransitionTime: metav1.NewTime(c.clock.Now()),
		})
		if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).V(2).Info("Could not mark the pod failed before deleting it", "pod", klog.KObj(p), "err", err)
		}
	}
	zero := int64(0)
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func setCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			s.Conditions[i] = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}
