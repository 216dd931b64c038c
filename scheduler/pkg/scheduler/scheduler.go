package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/tracing"
	schedcache "skiff.dev/scheduler/pkg/cache"
	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/queue"
)

// ErrNoNodesAvailable is upstream's error when the cluster has no nodes.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Profile is a framework with the event recorder of its scheduler name.
type Profile struct {
	Framework *framework.Framework
	Recorder  record.EventRecorder
}

// Scheduler schedules the pods of its profiles, one pod at a time; a pod
// goes to the profile named by its spec.schedulerName.
type Scheduler struct {
	client    kubernetes.Interface
	profiles  map[string]Profile
	handle    *framework.StaticHandle
	nominator *framework.Nominator
	cache     *schedcache.Cache
	queue     *queue.Queue
	metrics   *Metrics
	podLister corelisters.PodLister
	rnd       *rand.Rand
	binds     sync.WaitGroup
	// percentage is the scheduler-wide percentageOfNodesToScore (0:
	// upstream's adaptive default).
	percentage int32
	// nextStartNodeIndex rotates where filtering starts, so that stopping
	// early does not always favour the same nodes.
	nextStartNodeIndex int
	// tracer makes the spans of the scheduling cycles and binds.
	tracer trace.Tracer
}

// Options configure New.
type Options struct {
	Client    kubernetes.Interface
	Informers informers.SharedInformerFactory
	Profiles  []Profile
	// Handle is the one the profiles' plugins were built with; the
	// scheduler sets its snapshot before each cycle.
	Handle  *framework.StaticHandle
	Metrics *Metrics
	Queue   *queue.Queue
	// PercentageOfNodesToScore is the scheduler-wide setting, 0..100.
	PercentageOfNodesToScore int32
	// Nominator is the one the profiles were built with (WithNominator);
	// the scheduler keeps it up to date with the pods' nominations.
	Nominator *framework.Nominator
	// TracerProvider traces each scheduling cycle and bind (nil: off).
	TracerProvider trace.TracerProvider
}

// New builds a scheduler and registers its informer handlers.
func New(o Options) (*Scheduler, error) {
	if len(o.Profiles) == 0 {
		return nil, errors.New("at least one profile is required")
	}
	if o.Handle == nil {
		return nil, errors.New("the handle the profiles were built with is required")
	}
	if o.Nominator == nil {
		o.Nominator = framework.NewNominator()
	}
	s := &Scheduler{
		client:     o.Client,
		profiles:   map[string]Profile{},
		handle:     o.Handle,
		nominator:  o.Nominator,
		cache:      schedcache.New(),
		queue:      o.Queue,
		metrics:    o.Metrics,
		podLister:  o.Informers.Core().V1().Pods().Lister(),
		rnd:        rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0)),
		percentage: o.PercentageOfNodesToScore,
		tracer:     tracing.Tracer(o.TracerProvider, "skiff.dev/scheduler"),
	}
	for _, p := range o.Profiles {
		name := p.Framework.ProfileName()
		if _, dup := s.profiles[name]; dup {
			return nil, fmt.Errorf("two profiles are named %q", name)
		}
		s.profiles[name] = p
	}
	if s.queue == nil {
		s.queue = queue.New(queue.WithGauges(o.Metrics.SetPending))
	}
	if err := s.addEventHandlers(o.Informers); err != nil {
		return nil, err
	}
	return s, nil
}

// Cache returns the scheduler's cache (tests).
func (s *Scheduler) Cache() *schedcache.Cache { return s.cache }

func assigned(p *corev1.Pod) bool { return p.Spec.NodeName != "" }

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func (s *Scheduler) responsibleFor(p *corev1.Pod) bool {
	_, ok := s.profiles[p.Spec.SchedulerName]
	return ok
}

func podOf(obj any) *corev1.Pod {
	switch t := obj.(type) {
	case *corev1.Pod:
		return t
	case cache.DeletedFinalStateUnknown:
		p, _ := t.Obj.(*corev1.Pod)
		return p
	}
	return nil
}

func nodeOf(obj any) *corev1.Node {
	switch t := obj.(type) {
	case *corev1.Node:
		return t
	case cache.DeletedFinalStateUnknown:
		n, _ := t.Obj.(*corev1.Node)
		return n
	}
	return nil
}

func (s *Scheduler) addEventHandlers(f informers.SharedInformerFactory) error {
	pods := f.Core().V1().Pods().Informer()
	// Bound pods feed the cache.
	if _, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			p := podOf(obj)
			return p != nil && assigned(p) && !terminal(p)
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				p := podOf(obj)
				s.cache.AddPod(p)
				s.nominator.Delete(p.UID)
				// A new pod may satisfy a waiting pod's affinity or even out
				// its spread.
				s.queue.MoveToActiveOrBackoffQueueIf(dependsOnOtherPods)
			},
			UpdateFunc: func(oldObj, newObj any) {
				s.cache.UpdatePod(podOf(oldObj), podOf(newObj))
			},
			DeleteFunc: func(obj any) {
				if p := podOf(obj); p != nil {
					s.cache.RemovePod(p)
					s.queue.MoveAllToActiveOrBackoffQueue()
				}
			},
		},
	}); err != nil {
		return err
	}
	// This scheduler's pending pods feed the queue.
	if _, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			p := podOf(obj)
			// Pods with scheduling gates wait outside the queue; removing the
			// last gate makes the filter pass, which the handler sees as an add.
			return p != nil && !assigned(p) && s.responsibleFor(p) && p.DeletionTimestamp == nil &&
				len(p.Spec.SchedulingGates) == 0
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				p := podOf(obj)
				s.nominator.Set(p, p.Status.NominatedNodeName)
				s.queue.Add(p)
			},
			UpdateFunc: func(oldObj, newObj any) {
				p := podOf(newObj)
				s.nominator.Set(p, p.Status.NominatedNodeName)
				s.queue.Update(podOf(oldObj), p)
			},
			DeleteFunc: func(obj any) {
				if p := podOf(obj); p != nil {
					s.nominator.Delete(p.UID)
					s.queue.Delete(p)
				}
			},
		},
	}); err != nil {
		return err
	}
	// A claim or volume that changed (bound, provisioned, created) may let
	// a pod waiting on VolumeBinding through, as upstream's queueing hints.
	storageChanged := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.queue.MoveAllToActiveOrBackoffQueue() },
		UpdateFunc: func(any, any) { s.queue.MoveAllToActiveOrBackoffQueue() },
	}
	for _, inf := range []cache.SharedIndexInformer{f.Core().V1().PersistentVolumeClaims().Informer(),
		f.Core().V1().PersistentVolumes().Informer(), f.Storage().V1().StorageClasses().Informer()} {
		if _, err := inf.AddEventHandler(storageChanged); err != nil {
			return err
		}
	}
	_, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			s.cache.AddNode(nodeOf(obj))
			s.queue.MoveAllToActiveOrBackoffQueue()
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := nodeOf(oldObj), nodeOf(newObj)
			s.cache.UpdateNode(n)
			if nodeSchedulingPropertiesChanged(o, n) {
				s.queue.MoveAllToActiveOrBackoffQueue()
			}
		},
		DeleteFunc: func(obj any) {
			if n := nodeOf(obj); n != nil {
				s.cache.RemoveNode(n)
			}
		},
	})
	return err
}

// dependsOnOtherPods is true for pods whose placement depends on where
// other pods are: inter-pod affinity or topology spread constraints.
func dependsOnOtherPods(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return len(p.Spec.TopologySpreadConstraints) > 0 || (a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil))
}

func nodeSchedulingPropertiesChanged(o, n *corev1.Node) bool {
	if o == nil {
		return true
	}
	return o.Spec.Unschedulable != n.Spec.Unschedulable ||
		!mapsEqual(o.Labels, n.Labels) ||
		!taintsEqual(o.Spec.Taints, n.Spec.Taints) ||
		!resourceListEqual(o.Status.Allocatable, n.Status.Allocatable)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func taintsEqual(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].MatchTaint(&b[i]) || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

func resourceListEqual(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv.Cmp(v) != 0 {
			return false
		}
	}
	return true
}

// Run schedules pods until ctx ends; the informers must have synced.
func (s *Scheduler) Run(ctx context.Context) error {
	go s.queue.Run(ctx)
	for {
		qpi, err := s.queue.Pop()
		if err != nil {
			break
		}
		s.scheduleOne(ctx, qpi)
	}
	s.binds.Wait()
	return nil
}

// skip is true for pods that were deleted, bound or assumed meanwhile.
func (s *Scheduler) skip(pod *corev1.Pod) bool {
	cur, err := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	if err != nil || cur.UID != pod.UID || cur.DeletionTimestamp != nil || assigned(cur) {
		return true
	}
	return s.cache.IsAssumed(pod.UID)
}

func (s *Scheduler) scheduleOne(ctx context.Context, qpi *queue.QueuedPodInfo) {
	pod := qpi.Pod
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	if s.skip(pod) {
		s.queue.Done(pod)
		return
	}
	prof, ok := s.profiles[pod.Spec.SchedulerName]
	if !ok {
		logger.Error(nil, "No profile for the pod's scheduler name", "schedulerName", pod.Spec.SchedulerName)
		s.queue.Done(pod)
		return
	}
	start := time.Now()
	ctx, span := s.tracer.Start(ctx, "SchedulingCycle")
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(append(tracing.PodAttributes(pod),
			attribute.Int("attempts", qpi.Attempts), attribute.String("profile", prof.Framework.ProfileName()))...)
	}
	cycle := s.queue.SchedulingCycle()
	state := framework.NewCycleState()
	host, err := s.schedulePod(ctx, prof.Framework, state, pod)
	if span.IsRecording() {
		span.SetAttributes(tracing.NodeNameKey.String(host))
	}
	s.metrics.SchedulingLatency.WithLabelValues().Observe(time.Since(start).Seconds())
	if err != nil {
		var fitErr *framework.FitError
		var nominate *framework.PostFilterResult
		result := "error"
		if errors.As(err, &fitErr) {
			result = "unschedulable"
			nominate = s.runPostFilter(ctx, prof.Framework, state, pod, fitErr)
			logger.V(2).Info("Unable to schedule pod; no fit; waiting", "err", err)
		} else {
			logger.Error(err, "Error scheduling pod; retrying")
		}
		span.SetAttributes(attribute.String("result", result))
		span.RecordError(err)
		s.observe(prof, result, start)
		s.handleFailure(ctx, prof, qpi, err, result == "unschedulable", cycle, nominate)
		return
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = host
	s.nominator.Delete(pod.UID)
	if err := s.cache.AssumePod(assumed); err != nil {
		s.observe(prof, "error", start)
		s.handleFailure(ctx, prof, qpi, err, false, cycle, nil)
		return
	}
	if st := prof.Framework.RunReservePlugins(ctx, state, assumed, host); !st.IsSuccess() {
		s.cache.ForgetPod(assumed)
		s.observe(prof, "error", start)
		s.handleFailure(ctx, prof, qpi, st.AsError(), st.IsRejected(), cycle, nil)
		return
	}
	s.binds.Add(1)
	go func() {
		defer s.binds.Done()
		ctx, span := s.tracer.Start(ctx, "Bind")
		defer span.End()
		if span.IsRecording() {
			span.SetAttributes(append(tracing.PodAttributes(pod), tracing.NodeNameKey.String(host))...)
		}
		if st := prof.Framework.RunPreBindPlugins(ctx, state, assumed, host); !st.IsSuccess() {
			span.RecordError(st.AsError())
			prof.Framework.RunUnreservePlugins(ctx, state, assumed, host)
			s.cache.ForgetPod(assumed)
			logger.Error(st.AsError(), "PreBind failed", "plugin", st.Plugin(), "node", host)
			s.observe(prof, "error", start)
			s.handleFailure(ctx, prof, qpi, st.AsError(), st.IsRejected(), cycle, nil)
			return
		}
		if err := s.bind(ctx, assumed, host); err != nil {
			span.RecordError(err)
			prof.Framework.RunUnreservePlugins(ctx, state, assumed, host)
			s.cache.ForgetPod(assumed)
			logger.Error(err, "Failed to bind pod", "node", host)
			s.observe(prof, "error", start)
			s.handleFailure(ctx, prof, qpi, err, false, cycle, nil)
			return
		}
		s.cache.FinishBinding(assumed)
		s.queue.Done(pod)
		s.observe(prof, "scheduled", start)
		if !qpi.InitialAttemptTimestamp.IsZero() {
			s.metrics.PodSchedulingSLIDuration.WithLabelValues(attemptsLabel(qpi.Attempts)).Observe(time.Since(qpi.InitialAttemptTimestamp).Seconds())
		}
		logger.V(2).Info("Successfully bound pod to node", "node", host)
		prof.Recorder.Eventf(assumed, corev1.EventTypeNormal, "Scheduled", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, host)
	}()
}

// runPostFilter runs the PostFilter plugins (preemption) for a pod that
// fits nowhere, adds what they said to the error and returns the
// nomination to record, if any.
func (s *Scheduler) runPostFilter(ctx context.Context, fwk *framework.Framework, state *framework.CycleState, pod *corev1.Pod, fitErr *framework.FitError) *framework.PostFilterResult {
	if !fwk.HasPostFilterPlugins() {
		return nil
	}
	result, st := fwk.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
	fitErr.Diagnosis.PostFilterMsg = st.Message()
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	if st.Code() == framework.Error {
		logger.Error(st.AsError(), "Running PostFilter plugins", "plugin", st.Plugin())
	} else if result != nil && result.NominatedNodeName != "" {
		logger.V(2).Info("Preempted pods to make room; nominating node", "node", result.NominatedNodeName)
	}
	return result
}

func (s *Scheduler) observe(prof Profile, result string, start time.Time) {
	name := prof.Framework.ProfileName()
	s.metrics.ScheduleAttempts.WithLabelValues(result, name).Inc()
	s.metrics.AttemptDuration.WithLabelValues(result, name).Observe(time.Since(start).Seconds())
}

// Upstream's bounds for how many feasible nodes a cycle looks for.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// numFeasibleNodesToFind is upstream's: all nodes in small clusters,
// otherwise the profile's (or the scheduler's) percentage of them, by
// default 50% less 1% per 125 nodes but at least 5%, and never fewer than
// 100.
func (s *Scheduler) numFeasibleNodesToFind(profilePercentage *int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	percentage := s.percentage
	if profilePercentage != nil {
		percentage = *profilePercentage
	}
	if percentage == 0 {
		percentage = int32(50 - numAllNodes/125)
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	n := numAllNodes * int(percentage) / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// schedulePod filters and scores the snapshot's nodes and returns the best.
func (s *Scheduler) schedulePod(ctx context.Context, fwk *framework.Framework, state *framework.CycleState, pod *corev1.Pod) (string, error) {
	nodes := s.cache.Snapshot()
	if len(nodes) == 0 {
		return "", ErrNoNodesAvailable
	}
	s.handle.SetSnapshot(framework.NewSnapshot(nodes))
	if st := fwk.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		if st.IsRejected() {
			diag := framework.Diagnosis{PreFilterMsg: st.Message(), NodeToStatus: make(map[string]*framework.Status, len(nodes))}
			for _, ni := range nodes {
				diag.NodeToStatus[ni.Node().Name] = st
			}
			return "", &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diag}
		}
		return "", st.AsError()
	}
	feasible, diag, err := s.findNodesThatPassFilters(ctx, fwk, state, pod, nodes)
	if err != nil {
		return "", err
	}
	if len(feasible) == 0 {
		return "", &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diag}
	}
	if len(feasible) == 1 || !fwk.HasScorePlugins() {
		return feasible[0].Node().Name, nil
	}
	if st := fwk.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return "", fmt.Errorf("running PreScore plugin %q: %w", st.Plugin(), st.AsError())
	}
	scores, st := fwk.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return "", st.AsError()
	}
	return framework.SelectHost(scores, s.rnd)
}

// findNodesThatPassFilters runs the filters from a rotating start until
// enough feasible nodes are found, recording why the others failed.
func (s *Scheduler) findNodesThatPassFilters(ctx context.Context, fwk *framework.Framework, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) ([]*framework.NodeInfo, framework.Diagnosis, error) {
	diag := framework.Diagnosis{NodeToStatus: map[string]*framework.Status{}}
	want := s.numFeasibleNodesToFind(fwk.PercentageOfNodesToScore(), len(nodes))
	feasible := make([]*framework.NodeInfo, 0, want)
	start := s.nextStartNodeIndex % len(nodes)
	processed := 0
	for i := 0; i < len(nodes) && len(feasible) < want; i++ {
		ni := nodes[(start+i)%len(nodes)]
		processed++
		st := fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		switch {
		case st.IsSuccess():
			feasible = append(feasible, ni)
		case st.IsRejected():
			diag.NodeToStatus[ni.Node().Name] = st
		default:
			return nil, diag, fmt.Errorf("running filter plugin %q on node %q: %w", st.Plugin(), ni.Node().Name, st.AsError())
		}
	}
	s.nextStartNodeIndex = (start + processed) % len(nodes)
	return feasible, diag, nil
}

func (s *Scheduler) bind(ctx context.Context, pod *corev1.Pod, host string) error {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: host},
	}
	if err := s.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding rejected: %w", err)
	}
	return nil
}

// handleFailure records why the pod was not scheduled and puts it back.
func (s *Scheduler) handleFailure(ctx context.Context, prof Profile, qpi *queue.QueuedPodInfo, schedErr error, unschedulable bool, cycle int64, nominate *framework.PostFilterResult) {
	pod := qpi.Pod
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	cur, err := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	switch {
	case err != nil || cur.UID != pod.UID:
		logger.V(3).Info("Pod was deleted; not requeueing")
		s.queue.Done(pod)
		return
	case assigned(cur):
		logger.V(3).Info("Pod was bound meanwhile; not requeueing", "node", cur.Spec.NodeName)
		s.queue.Done(pod)
		return
	}
	qpi.Pod = cur
	s.queue.AddUnschedulableIfNotPresent(qpi, unschedulable, cycle)

	msg := truncateMessage(schedErr.Error())
	reason := corev1.PodReasonSchedulerError
	if unschedulable {
		reason = corev1.PodReasonUnschedulable
	}
	prof.Recorder.Event(cur, corev1.EventTypeWarning, "FailedScheduling", msg)
	if err := s.setPodScheduledFalse(ctx, cur, reason, msg, nominate); err != nil {
		logger.Error(err, "Failed to update the PodScheduled condition")
	} else if nominate != nil {
		s.nominator.Set(cur, nominate.NominatedNodeName)
	}
}

// setPodScheduledFalse writes PodScheduled=False unless it already says
// so, and status.nominatedNodeName when nominate is set.
func (s *Scheduler) setPodScheduledFalse(ctx context.Context, pod *corev1.Pod, reason, msg string, nominate *framework.PostFilterResult) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		if cur.UID != pod.UID || cur.Spec.NodeName != "" {
			return nil
		}
		cond := corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: msg,
			LastTransitionTime: metav1.Now(),
		}
		found, nominationChanged := false, false
		if nominate != nil && cur.Status.NominatedNodeName != nominate.NominatedNodeName {
			cur.Status.NominatedNodeName = nominate.NominatedNodeName
			nominationChanged = true
		}
		for i := range cur.Status.Conditions {
			c := &cur.Status.Conditions[i]
			if c.Type != corev1.PodScheduled {
				continue
			}
			found = true
			if c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
				if !nominationChanged {
					return nil
				}
				break
			}
			if c.Status == cond.Status {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			*c = cond
		}
		if !found {
			cur.Status.Conditions = append(cur.Status.Conditions, cond)
		}
		_, err = s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// truncateMessage caps event messages at 1024 characters as upstream does.
func truncateMessage(msg string) string {
	const max = 1024
	if len(msg) <= max {
		return msg
	}
	suffix := " ..."
	return msg[:max-len(suffix)] + suffix
}
