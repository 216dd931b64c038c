package defaultpreemption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "DefaultPreemption"

// Upstream's bounds on how many candidate nodes a dry run collects.
const (
	minCandidateNodesPercentage = 10
	minCandidateNodesAbsolute   = 100
)

// Upstream's messages.
const (
	msgNotHelpful = "Preemption is not helpful for scheduling"
	msgNoVictims  = "No preemption victims found for incoming pod"
)

// DefaultPreemption is the plugin.
type DefaultPreemption struct {
	fh framework.FrameworkHandle
}

var _ framework.PostFilterPlugin = (*DefaultPreemption)(nil)

// New builds the plugin; it needs the handle framework.New passes.
func New(args json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	if len(args) > 0 {
		return nil, errors.New("the plugin takes no arguments")
	}
	fh, ok := h.(framework.FrameworkHandle)
	if !ok {
		return nil, errors.New("the plugin needs the handle of a framework")
	}
	return &DefaultPreemption{fh: fh}, nil
}

// Name returns Name.
func (*DefaultPreemption) Name() string { return Name }

// candidate is a node and the pods to delete there.
type candidate struct {
	node    string
	victims []*corev1.Pod
}

// PostFilter tries to make room for pod by preempting lower-priority pods.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeStatus map[string]*framework.Status) (*framework.PostFilterResult, *framework.Status) {
	result, st := pl.preempt(ctx, state, pod, nodeStatus)
	if msg := st.Message(); msg != "" {
		return result, framework.NewStatus(st.Code(), "preemption: "+msg)
	}
	return result, st
}

func (pl *DefaultPreemption) preempt(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeStatus map[string]*framework.Status) (*framework.PostFilterResult, *framework.Status) {
	if ok, msg := pl.eligible(pod, nodeStatus[pod.Status.NominatedNodeName]); !ok {
		return nil, framework.NewStatus(framework.Unschedulable, msg)
	}
	all := pl.fh.SnapshotSharedLister().List()
	if len(all) == 0 {
		return nil, framework.AsStatus(errors.New("no nodes available"))
	}
	var potential []*framework.NodeInfo
	for _, ni := range all {
		if nodeStatus[ni.Node().Name].Code() == framework.Unschedulable {
			potential = append(potential, ni)
		}
	}
	candidates, statuses := pl.dryRun(ctx, state, pod, potential)
	if len(candidates) == 0 {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(all), Diagnosis: framework.Diagnosis{
			NodeToStatus:      statuses,
			AbsentNodesStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNotHelpful),
		}}
		// Clear a nomination that no longer holds.
		return &framework.PostFilterResult{}, framework.NewStatus(framework.Unschedulable, fitErr.Error())
	}
	best := pickOne(candidates)
	if err := pl.prepare(ctx, best, pod); err != nil {
		return nil, framework.AsStatus(err)
	}
	return &framework.PostFilterResult{NominatedNodeName: best.node}, nil
}

// eligible is upstream's PodEligibleToPreemptOthers: not with
// preemptionPolicy Never, nor while an earlier preemption's victims are
// still terminating on the nominated node.
func (pl *DefaultPreemption) eligible(pod *corev1.Pod, nominatedStatus *framework.Status) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	nom := pod.Status.NominatedNodeName
	if nom == "" || nominatedStatus.Code() == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ni, err := pl.fh.SnapshotSharedLister().Get(nom); err == nil {
		prio := podPriority(pod)
		for _, p := range ni.Pods {
			if podPriority(p.Pod) < prio && terminatingByPreemption(p.Pod) {
				return false, "not eligible due to a terminating pod on the nominated node."
			}
		}
	}
	return true, ""
}

func terminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// dryRun evaluates the potential nodes, from a random offset, until it has
// upstream's number of candidates; it returns them and why the other
// evaluated nodes are not.
func (pl *DefaultPreemption) dryRun(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, potential []*framework.NodeInfo) ([]candidate, map[string]*framework.Status) {
	statuses := map[string]*framework.Status{}
	n := len(potential)
	if n == 0 {
		return nil, statuses
	}
	want := max(n*minCandidateNodesPercentage/100, minCandidateNodesAbsolute)
	offset := rand.IntN(n)
	var out []candidate
	for i := 0; i < n && len(out) < want; i++ {
		ni := potential[(offset+i)%n]
		victims, st := pl.selectVictimsOnNode(ctx, state.Clone(), pod, ni.Clone())
		if st.IsSuccess() && len(victims) == 0 {
			st = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Node().Name))
		}
		if st.IsSuccess() {
			out = append(out, candidate{node: ni.Node().Name, victims: victims})
			continue
		}
		statuses[ni.Node().Name] = st
	}
	return out, statuses
}

// selectVictimsOnNode removes every lower-priority pod from (a copy of)
// the node; if the pod then fits, it puts back as many as it can, most
// important first, and returns the rest.
func (pl *DefaultPreemption) selectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) ([]*corev1.Pod, *framework.Status) {
	fwk := pl.fh.Framework()
	remove := func(pi *framework.PodInfo) *framework.Status {
		ni.RemovePod(pi.Pod)
		return fwk.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, ni)
	}
	add := func(pi *framework.PodInfo) *framework.Status {
		ni.AddPodInfo(pi)
		return fwk.RunPreFilterExtensionAddPod(ctx, state, pod, pi, ni)
	}
	prio := podPriority(pod)
	var potential []*framework.PodInfo
	for _, pi := range ni.Pods {
		if podPriority(pi.Pod) < prio {
			potential = append(potential, pi)
		}
	}
	if len(potential) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNoVictims)
	}
	for _, pi := range potential {
		if st := remove(pi); !st.IsSuccess() {
			return nil, st
		}
	}
	if st := fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); !st.IsSuccess() {
		return nil, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return moreImportant(potential[i].Pod, potential[j].Pod) })
	var victims []*corev1.Pod
	for _, pi := range potential {
		if st := add(pi); !st.IsSuccess() {
			return nil, st
		}
		if fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni).IsSuccess() {
			continue // reprieved
		}
		if st := remove(pi); !st.IsSuccess() {
			return nil, st
		}
		victims = append(victims, pi.Pod)
	}
	return victims, nil
}

// moreImportant orders by priority, then by start time, earlier first.
func moreImportant(a, b *corev1.Pod) bool {
	pa, pb := podPriority(a), podPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a).Before(startTime(b))
}

func startTime(p *corev1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return time.Now()
}

// pickOne is upstream's pickOneNodeForPreemption without PDBs: the lowest
// highest victim priority, then the lowest sum of priorities, then the
// fewest victims, then the latest start of the highest-priority victims,
// then the first.
func pickOne(cs []candidate) candidate {
	criteria := []func(c candidate) int64{
		func(c candidate) int64 { return -int64(podPriority(c.victims[0])) },
		func(c candidate) int64 {
			var sum int64
			for _, v := range c.victims {
				sum += int64(podPriority(v)) + math.MaxInt32 + 1
			}
			return -sum
		},
		func(c candidate) int64 { return -int64(len(c.victims)) },
		func(c candidate) int64 { return earliestStartOfHighest(c.victims).UnixNano() },
	}
	best := cs
	for _, score := range criteria {
		if len(best) == 1 {
			break
		}
		top := int64(math.MinInt64)
		var next []candidate
		for _, c := range best {
			s := score(c)
			switch {
			case s > top:
				top, next = s, []candidate{c}
			case s == top:
				next = append(next, c)
			}
		}
		best = next
	}
	return best[0]
}

// earliestStartOfHighest is the earliest start time among the victims of
// the highest priority (victims are sorted most important first).
func earliestStartOfHighest(victims []*corev1.Pod) time.Time {
	top := podPriority(victims[0])
	earliest := startTime(victims[0])
	for _, v := range victims[1:] {
		if podPriority(v) == top && startTime(v).Before(earliest) {
			earliest = startTime(v)
		}
	}
	return earliest
}

// prepare marks each victim DisruptionTarget, deletes it and records the
// Preempted event on it.
func (pl *DefaultPreemption) prepare(ctx context.Context, c candidate, pod *corev1.Pod) error {
	logger := klog.FromContext(ctx)
	client := pl.fh.ClientSet()
	if client == nil {
		return errors.New("preemption needs an API client")
	}
	for _, v := range c.victims {
		if err := markDisruptionTarget(ctx, client.CoreV1().Pods(v.Namespace), v, pod.Spec.SchedulerName); err != nil {
			return fmt.Errorf("marking victim %s/%s: %w", v.Namespace, v.Name, err)
		}
		uid := v.UID
		err := client.CoreV1().Pods(v.Namespace).Delete(ctx, v.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting victim %s/%s: %w", v.Namespace, v.Name, err)
		}
		if r := pl.fh.EventRecorder(); r != nil {
			r.Eventf(v, corev1.EventTypeNormal, "Preempted", "Preempted by pod %v on node %v", pod.UID, c.node)
		}
		logger.V(2).Info("Preempted pod", "victim", klog.KObj(v), "preemptor", klog.KObj(pod), "node", c.node)
	}
	// Pods of lower priority nominated to the node lose the nomination,
	// as the preemptor takes the room.
	for _, pi := range pl.fh.Framework().Nominator().NominatedPodsForNode(c.node) {
		if podPriority(pi.Pod) >= podPriority(pod) || pi.Pod.UID == pod.UID {
			continue
		}
		if err := clearNomination(ctx, client.CoreV1().Pods(pi.Pod.Namespace), pi.Pod); err != nil {
			logger.Error(err, "Clearing a lower-priority pod's nomination", "pod", klog.KObj(pi.Pod))
		}
	}
	return nil
}

// clearNomination empties status.nominatedNodeName.
func clearNomination(ctx context.Context, pods podStatusClient, p *corev1.Pod) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if cur.UID != p.UID || cur.Status.NominatedNodeName == "" {
			return nil
		}
		cur.Status.NominatedNodeName = ""
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

type podStatusClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error)
	UpdateStatus(ctx context.Context, pod *corev1.Pod, opts metav1.UpdateOptions) (*corev1.Pod, error)
}

// markDisruptionTarget sets upstream's DisruptionTarget condition.
func markDisruptionTarget(ctx context.Context, pods podStatusClient, victim *corev1.Pod, schedulerName string) error {
	cond := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler,
		Message: fmt.Sprintf("%s: preempting to accommodate a higher priority pod", schedulerName), LastTransitionTime: metav1.Now()}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, victim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if cur.UID != victim.UID {
			return nil
		}
		found := false
		for i := range cur.Status.Conditions {
			if cur.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cur.Status.Conditions[i], found = cond, true
			}
		}
		if !found {
			cur.Status.Conditions = append(cur.Status.Conditions, cond)
		}
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}
