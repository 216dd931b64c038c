package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

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

	schedcache "skiff.dev/scheduler/pkg/cache"
	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/queue"
)

// ErrNoNodesAvailable is upstream's error when the cluster has no nodes.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Scheduler schedules the pods of one profile.
type Scheduler struct {
	client    kubernetes.Interface
	fwk       *framework.Framework
	cache     *schedcache.Cache
	queue     *queue.Queue
	recorder  record.EventRecorder
	metrics   *Metrics
	podLister corelisters.PodLister
	rnd       *rand.Rand
	binds     sync.WaitGroup
}

// Options configure New.
type Options struct {
	Client    kubernetes.Interface
	Informers informers.SharedInformerFactory
	Framework *framework.Framework
	Recorder  record.EventRecorder
	Metrics   *Metrics
	Queue     *queue.Queue
}

// New builds a scheduler and registers its informer handlers.
func New(o Options) (*Scheduler, error) {
	s := &Scheduler{
		client:    o.Client,
		fwk:       o.Framework,
		cache:     schedcache.New(),
		queue:     o.Queue,
		recorder:  o.Recorder,
		metrics:   o.Metrics,
		podLister: o.Informers.Core().V1().Pods().Lister(),
		rnd:       rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0)),
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
	return p.Spec.SchedulerName == s.fwk.ProfileName()
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
			AddFunc: func(obj any) { s.cache.AddPod(podOf(obj)) },
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
			AddFunc: func(obj any) { s.queue.Add(podOf(obj)) },
			UpdateFunc: func(oldObj, newObj any) {
				s.queue.Update(podOf(oldObj), podOf(newObj))
			},
			DeleteFunc: func(obj any) {
				if p := podOf(obj); p != nil {
					s.queue.Delete(p)
				}
			},
		},
	}); err != nil {
		return err
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
	start := time.Now()
	cycle := s.queue.SchedulingCycle()
	state := framework.NewCycleState()
	host, err := s.schedulePod(ctx, state, pod)
	s.metrics.SchedulingLatency.WithLabelValues().Observe(time.Since(start).Seconds())
	if err != nil {
		var fitErr *framework.FitError
		result := "error"
		if errors.As(err, &fitErr) {
			result = "unschedulable"
			logger.V(2).Info("Unable to schedule pod; no fit; waiting", "err", err)
		} else {
			logger.Error(err, "Error scheduling pod; retrying")
		}
		s.observe(result, start)
		s.handleFailure(ctx, qpi, err, result == "unschedulable", cycle)
		return
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = host
	if err := s.cache.AssumePod(assumed); err != nil {
		s.observe("error", start)
		s.handleFailure(ctx, qpi, err, false, cycle)
		return
	}
	s.binds.Add(1)
	go func() {
		defer s.binds.Done()
		if err := s.bind(ctx, assumed, host); err != nil {
			s.cache.ForgetPod(assumed)
			logger.Error(err, "Failed to bind pod", "node", host)
			s.observe("error", start)
			s.handleFailure(ctx, qpi, err, false, cycle)
			return
		}
		s.cache.FinishBinding(assumed)
		s.queue.Done(pod)
		s.observe("scheduled", start)
		logger.V(2).Info("Successfully bound pod to node", "node", host)
		s.recorder.Eventf(assumed, corev1.EventTypeNormal, "Scheduled", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, host)
	}()
}

func (s *Scheduler) observe(result string, start time.Time) {
	s.metrics.ScheduleAttempts.WithLabelValues(result, s.fwk.ProfileName()).Inc()
	s.metrics.AttemptDuration.WithLabelValues(result, s.fwk.ProfileName()).Observe(time.Since(start).Seconds())
}

// schedulePod filters and scores the snapshot's nodes and returns the best.
func (s *Scheduler) schedulePod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod) (string, error) {
	nodes := s.cache.Snapshot()
	if len(nodes) == 0 {
		return "", ErrNoNodesAvailable
	}
	if st := s.fwk.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		if st.IsRejected() {
			return "", &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: framework.Diagnosis{PreFilterMsg: st.Message()}}
		}
		return "", st.AsError()
	}
	diag := framework.Diagnosis{NodeToStatus: map[string]*framework.Status{}}
	var feasible []*framework.NodeInfo
	for _, ni := range nodes {
		st := s.fwk.RunFilterPlugins(ctx, state, pod, ni)
		switch {
		case st.IsSuccess():
			feasible = append(feasible, ni)
		case st.IsRejected():
			diag.NodeToStatus[ni.Node().Name] = st
		default:
			return "", fmt.Errorf("running filter plugin %q on node %q: %w", st.Plugin(), ni.Node().Name, st.AsError())
		}
	}
	if len(feasible) == 0 {
		return "", &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diag}
	}
	if len(feasible) == 1 || !s.fwk.HasScorePlugins() {
		return feasible[0].Node().Name, nil
	}
	scores, st := s.fwk.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return "", st.AsError()
	}
	return framework.SelectHost(scores, s.rnd)
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
func (s *Scheduler) handleFailure(ctx context.Context, qpi *queue.QueuedPodInfo, schedErr error, unschedulable bool, cycle int64) {
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
	s.recorder.Event(cur, corev1.EventTypeWarning, "FailedScheduling", msg)
	if err := s.setPodScheduledFalse(ctx, cur, reason, msg); err != nil {
		logger.Error(err, "Failed to update the PodScheduled condition")
	}
}

// setPodScheduledFalse writes PodScheduled=False unless it already says so.
func (s *Scheduler) setPodScheduledFalse(ctx context.Context, pod *corev1.Pod, reason, msg string) error {
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
		found := false
		for i := range cur.Status.Conditions {
			c := &cur.Status.Conditions[i]
			if c.Type != corev1.PodScheduled {
				continue
			}
			found = true
			if c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
				return nil
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
