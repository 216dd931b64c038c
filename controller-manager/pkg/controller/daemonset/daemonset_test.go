package daemonset

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/deployment"
)

var now = time.Unix(1_700_000_000, 0)

type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	clock    *clocktesting.FakeClock
	dsIdx    cache.Indexer
	podIdx   cache.Indexer
	nodeIdx  cache.Indexer
	histIdx  cache.Indexer
	recorder *record.FakeRecorder
	created  atomic.Int64
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(1000), clock: clocktesting.NewFakeClock(now)}
	// The fake clientset does not implement generateName.
	f.client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		p := action.(core.CreateAction).GetObject().(*corev1.Pod)
		if p.Name == "" {
			p.Name = fmt.Sprintf("%s%05d", p.GenerateName, f.created.Add(1))
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(f.client, 0)
	dsInf, histInf := factory.Apps().V1().DaemonSets(), factory.Apps().V1().ControllerRevisions()
	podInf, nodeInf := factory.Core().V1().Pods(), factory.Core().V1().Nodes()
	f.c = NewController(f.client, dsInf, histInf, podInf, nodeInf, f.recorder, nil, Options{Clock: f.clock})
	f.dsIdx, f.podIdx, f.nodeIdx, f.histIdx = dsInf.Informer().GetIndexer(), podInf.Informer().GetIndexer(),
		nodeInf.Informer().GetIndexer(), histInf.Informer().GetIndexer()
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.DaemonSet:
			_ = f.dsIdx.Add(o)
		case *corev1.Pod:
			_ = f.podIdx.Add(o)
		case *corev1.Node:
			_ = f.nodeIdx.Add(o)
		case *appsv1.ControllerRevision:
			_ = f.histIdx.Add(o)
		}
	}
	return f
}

func (f *fixture) sync(ds *appsv1.DaemonSet) error {
	f.client.ClearActions()
	return f.c.sync(context.Background(), ds.Namespace+"/"+ds.Name)
}

// actions returns "verb resource(/subresource)" of the recorded writes.
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" || a.GetVerb() == "get" {
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (f *fixture) createdPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
			out = append(out, a.(core.CreateAction).GetObject().(*corev1.Pod))
		}
	}
	return out
}

func (f *fixture) deletedPods() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			out = append(out, a.(core.DeleteAction).GetName())
		}
	}
	sort.Strings(out)
	return out
}

func (f *fixture) status() *appsv1.DaemonSetStatus {
	var st *appsv1.DaemonSetStatus
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "update" && a.GetResource().Resource == "daemonsets" && a.GetSubresource() == "status" {
			s := a.(core.UpdateAction).GetObject().(*appsv1.DaemonSet).Status
			st = &s
		}
	}
	return st
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func newDS(name string) *appsv1.DaemonSet {
	one := intstr.FromInt32(1)
	zero := intstr.FromInt32(0)
	limit := int32(10)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), Generation: 1,
			Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "1"}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &one, MaxSurge: &zero}},
			RevisionHistoryLimit: &limit,
		},
	}
}

func newNode(name string, lbls map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Spec: corev1.NodeSpec{Taints: taints}}
}

func hashOf(ds *appsv1.DaemonSet) string {
	return deployment.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
}

// revisionOf is ds's current revision as the controller stores it.
func revisionOf(t *testing.T, ds *appsv1.DaemonSet, rev int64) *appsv1.ControllerRevision {
	t.Helper()
	patch, err := getPatch(ds)
	if err != nil {
		t.Fatal(err)
	}
	h := hashOf(ds)
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-" + h, Namespace: ds.Namespace, UID: types.UID(ds.Name + "-" + h),
			Labels:          map[string]string{"app": ds.Spec.Template.Labels["app"], RevisionHashLabel: h},
			OwnerReferences: []metav1.OwnerReference{*controllerutil.NewControllerRef(ds, "apps/v1", "DaemonSet")}},
		Data: runtime.RawExtension{Raw: patch}, Revision: rev,
	}
}

// daemonPod is a running pod of ds on node at revision hash, ready when
// ready (for an hour).
func daemonPod(name string, ds *appsv1.DaemonSet, node, hash string, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, UID: types.UID(name + "-uid"), ResourceVersion: "1",
			Labels:            map[string]string{"app": ds.Spec.Template.Labels["app"], RevisionHashLabel: hash},
			CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour)),
			OwnerReferences:   []metav1.OwnerReference{*controllerutil.NewControllerRef(ds, "apps/v1", "DaemonSet")}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
	}
	return p
}

func TestNodeShouldRunDaemonPod(t *testing.T) {
	noSchedule := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	noExecute := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name                  string
		mutate                func(*appsv1.DaemonSet)
		node                  *corev1.Node
		wantRun, wantContinue bool
	}{
		{name: "plain node", node: newNode("n1", nil), wantRun: true, wantContinue: true},
		{name: "node selector matches", mutate: func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"} },
			node: newNode("n1", map[string]string{"disk": "ssd"}), wantRun: true, wantContinue: true},
		{name: "node selector does not match", mutate: func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"} },
			node: newNode("n1", map[string]string{"disk": "hdd"})},
		{name: "required node affinity does not match", mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		}, node: newNode("n1", map[string]string{"zone": "b"})},
		{name: "required node affinity matches", mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		}, node: newNode("n1", map[string]string{"zone": "a"}), wantRun: true, wantContinue: true},
		{name: "untolerated NoSchedule: no new pod, the old one stays", node: newNode("n1", nil, noSchedule), wantContinue: true},
		{name: "untolerated NoExecute: evicted", node: newNode("n1", nil, noExecute)},
		{name: "tolerated by the template", mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}, node: newNode("n1", nil, noExecute), wantRun: true, wantContinue: true},
		{name: "not-ready NoExecute tolerated by daemon pods", node: newNode("n1", nil, corev1.Taint{Key: taintNodeNotReady, Effect: corev1.TaintEffectNoExecute}), wantRun: true, wantContinue: true},
		{name: "unreachable NoExecute tolerated", node: newNode("n1", nil, corev1.Taint{Key: taintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}), wantRun: true, wantContinue: true},
		{name: "unschedulable tolerated", node: newNode("n1", nil, corev1.Taint{Key: taintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}), wantRun: true, wantContinue: true},
		{name: "memory pressure tolerated", node: newNode("n1", nil, corev1.Taint{Key: taintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}), wantRun: true, wantContinue: true},
		{name: "network-unavailable not tolerated without hostNetwork", node: newNode("n1", nil, corev1.Taint{Key: taintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), wantContinue: true},
		{name: "network-unavailable tolerated with hostNetwork", mutate: func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.HostNetwork = true },
			node: newNode("n1", nil, corev1.Taint{Key: taintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), wantRun: true, wantContinue: true},
		{name: "template names another node", mutate: func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.NodeName = "n2" }, node: newNode("n1", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := newDS("ds")
			if tt.mutate != nil {
				tt.mutate(ds)
			}
			run, cont := NodeShouldRunDaemonPod(tt.node, ds)
			if run != tt.wantRun || cont != tt.wantContinue {
				t.Errorf("NodeShouldRunDaemonPod = %v, %v; want %v, %v", run, cont, tt.wantRun, tt.wantContinue)
			}
		})
	}
}

func TestSyncCreatesOnePodPerEligibleNode(t *testing.T) {
	ds := newDS("agent")
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
	worker := map[string]string{"role": "worker"}
	f := newFixture(t, ds, newNode("n1", worker), newNode("n2", worker), newNode("n3", map[string]string{"role": "control"}))
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	want := []string{"create controllerrevisions", "create pods", "create pods", "update daemonsets/status"}
	if got := f.actions(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("actions = %v, want %v", got, want)
	}
	hash := hashOf(ds)
	var nodes []string
	for _, p := range f.createdPods() {
		node, err := TargetNodeName(p)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, node)
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s has nodeName %q; the scheduler binds it", p.Name, p.Spec.NodeName)
		}
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" {
			t.Errorf("pod affinity = %+v, want one matchFields term on metadata.name", terms)
		}
		if p.Labels[RevisionHashLabel] != hash || p.Labels[TemplateGenerationLabel] != "1" || p.Labels["app"] != "agent" {
			t.Errorf("pod labels = %v", p.Labels)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "DaemonSet" || ref.UID != ds.UID {
			t.Errorf("controller ref = %+v", ref)
		}
		tols := map[string]corev1.TaintEffect{}
		for _, tol := range p.Spec.Tolerations {
			tols[tol.Key] = tol.Effect
		}
		wantTols := map[string]corev1.TaintEffect{
			taintNodeNotReady: corev1.TaintEffectNoExecute, taintNodeUnreachable: corev1.TaintEffectNoExecute,
			taintNodeDiskPressure: corev1.TaintEffectNoSchedule, taintNodeMemoryPressure: corev1.TaintEffectNoSchedule,
			taintNodePIDPressure: corev1.TaintEffectNoSchedule, taintNodeUnschedulable: corev1.TaintEffectNoSchedule,
		}
		if fmt.Sprint(tols) != fmt.Sprint(wantTols) {
			t.Errorf("tolerations = %v, want %v", tols, wantTols)
		}
	}
	sort.Strings(nodes)
	if strings.Join(nodes, ",") != "n1,n2" {
		t.Errorf("pods for nodes %v, want n1,n2", nodes)
	}
	st := f.status()
	if st == nil || st.DesiredNumberScheduled != 2 || st.CurrentNumberScheduled != 0 || st.NumberUnavailable != 2 || st.ObservedGeneration != 1 {
		t.Errorf("status = %+v", st)
	}
	evs := f.events()
	if len(evs) != 2 || !strings.HasPrefix(evs[0], "Normal SuccessfulCreate Created pod: agent-") {
		t.Errorf("events = %v", evs)
	}
	// A second sync before the informer shows the pods creates nothing.
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	if n := len(f.createdPods()); n != 0 {
		t.Errorf("second sync created %d pods", n)
	}
}

func TestSyncTable(t *testing.T) {
	failed := func(p *corev1.Pod) *corev1.Pod { p.Status.Phase = corev1.PodFailed; return p }
	succeeded := func(p *corev1.Pod) *corev1.Pod { p.Status.Phase = corev1.PodSucceeded; return p }
	unscheduled := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.NodeName = ""
		p.Spec.Affinity = ReplaceNodeNameAffinity(nil, "gone")
		return p
	}
	newer := func(p *corev1.Pod) *corev1.Pod { p.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute)); return p }
	tests := []struct {
		name       string
		mutate     func(*appsv1.DaemonSet)
		nodes      []*corev1.Node
		pods       func(ds *appsv1.DaemonSet, hash string) []*corev1.Pod
		wantCreate []string // target nodes
		wantDelete []string
		wantEvents []string // reasons
		wantStatus *appsv1.DaemonSetStatus
	}{
		{
			name:  "node lost its label: pod deleted, counted misscheduled",
			nodes: []*corev1.Node{newNode("n1", map[string]string{"role": "worker"}), newNode("n2", nil)},
			mutate: func(ds *appsv1.DaemonSet) {
				ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
			},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{daemonPod("p1", ds, "n1", h, true), daemonPod("p2", ds, "n2", h, true)}
			},
			wantDelete: []string{"p2"},
			wantEvents: []string{"SuccessfulDelete"},
			wantStatus: &appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberMisscheduled: 1,
				NumberReady: 1, NumberAvailable: 1, UpdatedNumberScheduled: 1, ObservedGeneration: 1},
		},
		{
			name:  "new node gets its pod",
			nodes: []*corev1.Node{newNode("n1", nil), newNode("n2", nil)},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{daemonPod("p1", ds, "n1", h, true)}
			},
			wantCreate: []string{"n2"},
			wantEvents: []string{"SuccessfulCreate"},
			wantStatus: &appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 1, NumberReady: 1,
				NumberAvailable: 1, NumberUnavailable: 1, UpdatedNumberScheduled: 1, ObservedGeneration: 1},
		},
		{
			name:  "failed pod deleted with an event",
			nodes: []*corev1.Node{newNode("n1", nil)},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{failed(daemonPod("p1", ds, "n1", h, false))}
			},
			wantDelete: []string{"p1"},
			wantEvents: []string{"FailedDaemonPod", "SuccessfulDelete"},
		},
		{
			name:  "succeeded pod deleted",
			nodes: []*corev1.Node{newNode("n1", nil)},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{succeeded(daemonPod("p1", ds, "n1", h, false))}
			},
			wantDelete: []string{"p1"},
			wantEvents: []string{"SucceededDaemonPod", "SuccessfulDelete"},
		},
		{
			name:  "two pods on a node: the newer goes",
			nodes: []*corev1.Node{newNode("n1", nil)},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{daemonPod("old", ds, "n1", h, true), newer(daemonPod("new", ds, "n1", h, true))}
			},
			wantDelete: []string{"new"},
			wantEvents: []string{"SuccessfulDelete"},
		},
		{
			name:  "unscheduled pod for a deleted node deleted",
			nodes: []*corev1.Node{newNode("n1", nil)},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{daemonPod("p1", ds, "n1", h, true), unscheduled(daemonPod("p2", ds, "", h, false))}
			},
			wantDelete: []string{"p2"},
			wantEvents: []string{"SuccessfulDelete"},
		},
		{
			name:  "NoSchedule taint keeps the running pod, NoExecute evicts",
			nodes: []*corev1.Node{newNode("n1", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), newNode("n2", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoExecute})},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{daemonPod("p1", ds, "n1", h, true), daemonPod("p2", ds, "n2", h, true)}
			},
			wantDelete: []string{"p2"},
			wantEvents: []string{"SuccessfulDelete"},
		},
		{
			name:   "minReadySeconds: ready but not yet available",
			mutate: func(ds *appsv1.DaemonSet) { ds.Spec.MinReadySeconds = 7200 },
			nodes:  []*corev1.Node{newNode("n1", nil)},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				return []*corev1.Pod{daemonPod("p1", ds, "n1", h, true)}
			},
			wantStatus: &appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberReady: 1,
				NumberUnavailable: 1, UpdatedNumberScheduled: 1, ObservedGeneration: 1},
		},
		{
			name:  "orphan adopted",
			nodes: []*corev1.Node{newNode("n1", nil)},
			pods: func(ds *appsv1.DaemonSet, h string) []*corev1.Pod {
				p := daemonPod("p1", ds, "n1", h, true)
				p.OwnerReferences = nil
				return []*corev1.Pod{p}
			},
			wantStatus: &appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, NumberReady: 1,
				NumberAvailable: 1, UpdatedNumberScheduled: 1, ObservedGeneration: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := newDS("agent")
			if tt.mutate != nil {
				tt.mutate(ds)
			}
			objs := []runtime.Object{ds, revisionOf(t, ds, 1)}
			for _, n := range tt.nodes {
				objs = append(objs, n)
			}
			for _, p := range tt.pods(ds, hashOf(ds)) {
				objs = append(objs, p)
			}
			f := newFixture(t, objs...)
			if err := f.sync(ds); err != nil {
				t.Fatal(err)
			}
			var created []string
			for _, p := range f.createdPods() {
				n, _ := TargetNodeName(p)
				created = append(created, n)
			}
			sort.Strings(created)
			if fmt.Sprint(created) != fmt.Sprint(tt.wantCreate) && !(len(created) == 0 && len(tt.wantCreate) == 0) {
				t.Errorf("created pods for %v, want %v", created, tt.wantCreate)
			}
			if got := f.deletedPods(); fmt.Sprint(got) != fmt.Sprint(tt.wantDelete) && !(len(got) == 0 && len(tt.wantDelete) == 0) {
				t.Errorf("deleted %v, want %v", got, tt.wantDelete)
			}
			var reasons []string
			for _, e := range f.events() {
				reasons = append(reasons, strings.Fields(e)[1])
			}
			sort.Strings(reasons)
			if fmt.Sprint(reasons) != fmt.Sprint(tt.wantEvents) && !(len(reasons) == 0 && len(tt.wantEvents) == 0) {
				t.Errorf("event reasons %v, want %v", reasons, tt.wantEvents)
			}
			if tt.wantStatus != nil {
				st := f.status()
				if st == nil || !reflect.DeepEqual(*st, *tt.wantStatus) {
					t.Errorf("status = %+v\nwant     %+v", st, tt.wantStatus)
				}
			}
		})
	}
}

func TestFailedPodBackoff(t *testing.T) {
	ds := newDS("agent")
	pod := daemonPod("p1", ds, "n1", hashOf(ds), false)
	pod.Status.Phase = corev1.PodFailed
	f := newFixture(t, ds, revisionOf(t, ds, 1), newNode("n1", nil), pod)
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	if got := f.deletedPods(); len(got) != 1 {
		t.Fatalf("first sync deleted %v, want p1", got)
	}
	// The replacement failed too, at once: within the back-off it stays.
	f.c.expectations.Delete("default/agent")
	pod2 := daemonPod("p2", ds, "n1", hashOf(ds), false)
	pod2.Status.Phase = corev1.PodFailed
	_ = f.podIdx.Delete(pod)
	_ = f.podIdx.Add(pod2)
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	if got := f.deletedPods(); len(got) != 0 {
		t.Fatalf("sync within the back-off deleted %v", got)
	}
	if f.c.queue.Len() != 0 {
		t.Errorf("queue length %d right after: the retry should wait for the back-off", f.c.queue.Len())
	}
	f.clock.Step(2 * time.Second)
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	if got := f.deletedPods(); len(got) != 1 || got[0] != "p2" {
		t.Errorf("sync after the back-off deleted %v, want p2", got)
	}
}

// rollout returns ds at template v2 with its two revisions, and pods of
// v1 on each node.
func rollout(t *testing.T, nodes int, mutate func(*appsv1.DaemonSet)) (*appsv1.DaemonSet, []runtime.Object) {
	t.Helper()
	v1 := newDS("agent")
	if mutate != nil {
		mutate(v1)
	}
	v2 := v1.DeepCopy()
	v2.Spec.Template.Spec.Containers[0].Command = []string{"sleep", "3600"}
	v2.Generation = 2
	v2.Annotations[appsv1.DeprecatedTemplateGeneration] = "2"
	objs := []runtime.Object{v2, revisionOf(t, v1, 1)}
	for i := 1; i <= nodes; i++ {
		node := fmt.Sprintf("n%d", i)
		objs = append(objs, newNode(node, nil))
		p := daemonPod("old-"+node, v1, node, hashOf(v1), true)
		p.Labels[TemplateGenerationLabel] = "1"
		objs = append(objs, p)
	}
	return v2, objs
}

func TestRollingUpdate(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }
	tests := []struct {
		name        string
		strategy    appsv1.DaemonSetUpdateStrategy
		wantDeletes int
		wantCreates int
	}{
		{"maxUnavailable 1", appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: num(1), MaxSurge: num(0)}}, 1, 0},
		{"maxUnavailable 50%", appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: pct("50%"), MaxSurge: num(0)}}, 2, 0},
		{"maxSurge 1", appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: num(0), MaxSurge: num(1)}}, 0, 1},
		{"maxSurge 100%", appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: num(0), MaxSurge: pct("100%")}}, 0, 4},
		{"OnDelete", appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, objs := rollout(t, 4, func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy = tt.strategy })
			f := newFixture(t, objs...)
			if err := f.sync(ds); err != nil {
				t.Fatal(err)
			}
			if n := len(f.deletedPods()); n != tt.wantDeletes {
				t.Errorf("deleted %d old pods, want %d (actions %v)", n, tt.wantDeletes, f.actions())
			}
			created := f.createdPods()
			if len(created) != tt.wantCreates {
				t.Errorf("created %d pods, want %d", len(created), tt.wantCreates)
			}
			for _, p := range created {
				if p.Labels[RevisionHashLabel] != hashOf(ds) || p.Labels[TemplateGenerationLabel] != "2" {
					t.Errorf("new pod labels %v", p.Labels)
				}
			}
			st := f.status()
			if st == nil || st.UpdatedNumberScheduled != 0 || st.DesiredNumberScheduled != 4 || st.ObservedGeneration != 2 {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

// With surge, the old pod goes once the new one beside it is available.
func TestRollingUpdateSurgeReplacesOnceAvailable(t *testing.T) {
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	ds, objs := rollout(t, 2, func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &zero, MaxSurge: &one}
	})
	newPod := daemonPod("new-n1", ds, "n1", hashOf(ds), false)
	f := newFixture(t, append(objs, newPod)...)
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	if got := f.deletedPods(); len(got) != 0 || len(f.createdPods()) != 0 {
		t.Fatalf("new pod not ready: deleted %v, created %d; want nothing (surge used up)", got, len(f.createdPods()))
	}
	ready := daemonPod("new-n1", ds, "n1", hashOf(ds), true)
	ready.ResourceVersion = "2"
	_ = f.podIdx.Update(ready)
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	if got := f.deletedPods(); fmt.Sprint(got) != "[old-n1]" {
		t.Errorf("deleted %v, want [old-n1]", got)
	}
}

func TestHistory(t *testing.T) {
	t.Run("rollback makes the old revision current again", func(t *testing.T) {
		v1 := newDS("agent")
		v2 := v1.DeepCopy()
		v2.Spec.Template.Spec.Containers[0].Command = []string{"sleep", "1"}
		// The DaemonSet is back at v1's template (kubectl rollout undo).
		back := v1.DeepCopy()
		back.Generation = 3
		f := newFixture(t, back, revisionOf(t, v1, 1), revisionOf(t, v2, 2), newNode("n1", nil),
			daemonPod("p1", v2, "n1", hashOf(v2), true))
		if err := f.sync(back); err != nil {
			t.Fatal(err)
		}
		var updated *appsv1.ControllerRevision
		for _, a := range f.client.Actions() {
			if a.GetVerb() == "create" && a.GetResource().Resource == "controllerrevisions" {
				t.Errorf("created a revision on rollback")
			}
			if a.GetVerb() == "update" && a.GetResource().Resource == "controllerrevisions" {
				updated = a.(core.UpdateAction).GetObject().(*appsv1.ControllerRevision)
			}
		}
		if updated == nil || updated.Name != revisionOf(t, v1, 1).Name || updated.Revision != 3 {
			t.Fatalf("revision update = %+v, want v1's renumbered 3", updated)
		}
		if got := f.deletedPods(); fmt.Sprint(got) != "[p1]" {
			t.Errorf("deleted %v, want the v2 pod p1 (rolling back)", got)
		}
	})
	t.Run("old revisions beyond the limit deleted unless a pod runs them", func(t *testing.T) {
		ds := newDS("agent")
		limit := int32(1)
		ds.Spec.RevisionHistoryLimit = &limit
		objs := []runtime.Object{ds, revisionOf(t, ds, 4), newNode("n1", nil)}
		var olds []*appsv1.ControllerRevision
		for i := 1; i <= 3; i++ {
			old := ds.DeepCopy()
			old.Spec.Template.Spec.Containers[0].Command = []string{"v", fmt.Sprint(i)}
			olds = append(olds, revisionOf(t, old, int64(i)))
			objs = append(objs, olds[i-1])
		}
		// A pod still runs revision 1.
		objs = append(objs, daemonPod("p1", ds, "n1", olds[0].Labels[RevisionHashLabel], true))
		f := newFixture(t, objs...)
		if err := f.sync(ds); err != nil {
			t.Fatal(err)
		}
		var deleted []string
		for _, a := range f.client.Actions() {
			if a.GetVerb() == "delete" && a.GetResource().Resource == "controllerrevisions" {
				deleted = append(deleted, a.(core.DeleteAction).GetName())
			}
		}
		// Three old revisions, a limit of one: two go, oldest first, but
		// revision 1 stays while a pod runs it.
		if fmt.Sprint(deleted) != fmt.Sprint([]string{olds[1].Name, olds[2].Name}) {
			t.Errorf("deleted revisions %v, want %s and %s (revision 1 is live)", deleted, olds[1].Name, olds[2].Name)
		}
	})
	t.Run("hash collision bumps collisionCount", func(t *testing.T) {
		ds := newDS("agent")
		other := revisionOf(t, ds, 1)
		other.Data.Raw = []byte(`{"spec":{"template":{"$patch":"replace"}}}`)
		other.OwnerReferences = []metav1.OwnerReference{*controllerutil.NewControllerRef(&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "x"}}, "apps/v1", "DaemonSet")}
		f := newFixture(t, ds, other, newNode("n1", nil))
		if err := f.sync(ds); err == nil {
			t.Fatal("sync succeeded with a colliding revision name")
		}
		fresh, err := f.client.AppsV1().DaemonSets("default").Get(context.Background(), "agent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Status.CollisionCount == nil || *fresh.Status.CollisionCount != 1 {
			t.Errorf("collisionCount = %v, want 1", fresh.Status.CollisionCount)
		}
	})
}

func TestSelectingAllAndNotFound(t *testing.T) {
	ds := newDS("agent")
	ds.Spec.Selector = &metav1.LabelSelector{}
	f := newFixture(t, ds, newNode("n1", nil))
	if err := f.sync(ds); err != nil {
		t.Fatal(err)
	}
	if got := f.actions(); len(got) != 0 {
		t.Errorf("actions = %v, want none", got)
	}
	if evs := f.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning SelectingAll") {
		t.Errorf("events = %v", evs)
	}
	if err := f.c.sync(context.Background(), "default/missing"); err != nil {
		t.Errorf("sync of a deleted DaemonSet: %v", err)
	}
}

func TestNodeEventsEnqueue(t *testing.T) {
	ds := newDS("agent")
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
	f := newFixture(t, ds)
	f.c.addNode(newNode("n1", nil))
	if f.c.queue.Len() != 0 {
		t.Errorf("a node the DaemonSet does not want enqueued it")
	}
	f.c.addNode(newNode("n2", map[string]string{"role": "worker"}))
	if f.c.queue.Len() != 1 {
		t.Fatalf("a new eligible node did not enqueue the DaemonSet")
	}
	key, _ := f.c.queue.Get()
	f.c.queue.Done(key)
	old := newNode("n2", map[string]string{"role": "worker"})
	cur := newNode("n2", map[string]string{"role": "worker"})
	cur.Status.Phase = corev1.NodeRunning
	f.c.updateNode(old, cur)
	if f.c.queue.Len() != 0 {
		t.Errorf("a status-only change enqueued the DaemonSet")
	}
	f.c.updateNode(old, newNode("n2", map[string]string{"role": "other"}))
	if f.c.queue.Len() != 1 {
		t.Errorf("a label change that removes the node did not enqueue the DaemonSet")
	}
}

func TestFailedPlacementEvent(t *testing.T) {
	ds := newDS("agent")
	f := newFixture(t, ds)
	old := daemonPod("p1", ds, "", hashOf(ds), false)
	old.Spec.Affinity = ReplaceNodeNameAffinity(nil, "n1")
	cur := old.DeepCopy()
	cur.ResourceVersion = "2"
	cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu."}}
	f.c.updatePod(old, cur)
	evs := f.events()
	if len(evs) != 1 || !strings.HasPrefix(evs[0], `Warning FailedPlacement failed to place pod p1 on "n1": 0/1 nodes are available`) {
		t.Errorf("events = %v", evs)
	}
}

// A DaemonSet whose pods the API server refuses gets FailedCreate events
// and an error (its key backs off); another DaemonSet is served meanwhile.
func TestRefusedPodsDoNotStopOthers(t *testing.T) {
	bad, good := newDS("bad"), newDS("good")
	f := newFixture(t, bad, good, newNode("n1", nil), newNode("n2", nil))
	f.client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		p := action.(core.CreateAction).GetObject().(*corev1.Pod)
		if p.Labels["app"] == "bad" {
			return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "", fmt.Errorf("exceeded quota"))
		}
		return false, nil, nil
	})
	if err := f.sync(bad); err == nil {
		t.Fatal("sync of the refused DaemonSet returned no error")
	}
	if n := len(f.createdPods()); n != 1 {
		t.Errorf("%d creates after a refusal, want 1 (slow start stops at the first failure)", n)
	}
	if evs := f.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning FailedCreate Error creating: ") {
		t.Errorf("events = %v", evs)
	}
	if adds, _ := f.c.expectations.Pending("default/bad"); adds != 0 {
		t.Errorf("still expecting %d creations that failed or were skipped", adds)
	}
	if err := f.sync(good); err != nil {
		t.Fatal(err)
	}
	if n := len(f.createdPods()); n != 2 {
		t.Errorf("the other DaemonSet created %d pods, want 2", n)
	}
}

func TestReplaceNodeNameAffinity(t *testing.T) {
	preferred := []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}
	tests := []struct {
		name string
		in   *corev1.Affinity
	}{
		{"none", nil},
		{"pod affinity only", &corev1.Affinity{PodAffinity: &corev1.PodAffinity{}}},
		{"preferred node affinity kept", &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred}}},
		{"required terms replaced", &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: preferred,
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpExists}}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hadPreferred := tt.in != nil && tt.in.NodeAffinity != nil && len(tt.in.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
			got := ReplaceNodeNameAffinity(tt.in.DeepCopy(), "n7")
			pod := &corev1.Pod{Spec: corev1.PodSpec{Affinity: got}}
			if node, err := TargetNodeName(pod); err != nil || node != "n7" {
				t.Errorf("TargetNodeName = %q, %v; want n7", node, err)
			}
			terms := got.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			if len(terms) != 1 || len(terms[0].MatchExpressions) != 0 || len(terms[0].MatchFields) != 1 {
				t.Errorf("required terms = %+v, want only the metadata.name term", terms)
			}
			if hadPreferred != (len(got.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 1) {
				t.Errorf("preferred terms changed: %+v", got.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
			}
			if tt.in != nil && tt.in.PodAffinity != nil && got.PodAffinity == nil {
				t.Error("pod affinity dropped")
			}
		})
	}
	if _, err := TargetNodeName(&corev1.Pod{}); err == nil {
		t.Error("TargetNodeName of a pod with neither nodeName nor affinity: no error")
	}
	if n, _ := TargetNodeName(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1", Affinity: ReplaceNodeNameAffinity(nil, "n2")}}); n != "n1" {
		t.Errorf("TargetNodeName of a bound pod = %q, want its nodeName n1", n)
	}
}
