package podtopologyspread

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

const zone = corev1.LabelTopologyZone

type placed struct {
	node string
	pod  *corev1.Pod
}

func cluster(nodes []*corev1.Node, pods []placed) []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range nodes {
		var ps []*corev1.Pod
		for _, p := range pods {
			if p.node == n.Name {
				pp := p.pod.DeepCopy()
				pp.Spec.NodeName = n.Name
				ps = append(ps, pp)
			}
		}
		out = append(out, testutil.NodeInfo(n, ps...))
	}
	return out
}

func spread(key string, skew int32, action corev1.UnsatisfiableConstraintAction, sel map[string]string) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: action,
		LabelSelector: &metav1.LabelSelector{MatchLabels: sel}}
}

func withSpread(p *corev1.Pod, cs ...corev1.TopologySpreadConstraint) *corev1.Pod {
	p.Spec.TopologySpreadConstraints = cs
	return p
}

func web(name string) *corev1.Pod { return testutil.LabeledPod(name, map[string]string{"app": "web"}) }

func zoneNodes() []*corev1.Node {
	return []*corev1.Node{
		testutil.LabeledNode("a1", map[string]string{zone: "a", corev1.LabelHostname: "a1"}),
		testutil.LabeledNode("a2", map[string]string{zone: "a", corev1.LabelHostname: "a2"}),
		testutil.LabeledNode("b1", map[string]string{zone: "b", corev1.LabelHostname: "b1"}),
		testutil.LabeledNode("c1", map[string]string{zone: "c", corev1.LabelHostname: "c1"}),
		testutil.LabeledNode("nolabel", map[string]string{corev1.LabelHostname: "nolabel"}),
	}
}

// hostNodes are three nodes labelled with their host names only, as the
// multi-node suite's.
func hostNodes() []*corev1.Node {
	var out []*corev1.Node
	for _, n := range []string{"n1", "n2", "n3"} {
		out = append(out, testutil.LabeledNode(n, map[string]string{corev1.LabelHostname: n}))
	}
	return out
}

// lostNode is hostNodes with n1 tainted as the node lifecycle controller
// taints a node whose kubelet stopped.
func lostNode() []*corev1.Node {
	nodes := hostNodes()
	nodes[0].Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}
	return nodes
}

func terminating(p *corev1.Pod) *corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{}
	return p
}

func TestFilter(t *testing.T) {
	sel := map[string]string{"app": "web"}
	minDomains := func(c corev1.TopologySpreadConstraint, n int32) corev1.TopologySpreadConstraint {
		c.MinDomains = &n
		return c
	}
	honor := corev1.NodeInclusionPolicyHonor
	ignore := corev1.NodeInclusionPolicyIgnore
	tainted := zoneNodes()
	tainted[3].Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	tests := []struct {
		name     string
		nodes    []*corev1.Node
		pod      *corev1.Pod
		existing []placed
		want     map[string]string
		skip     bool
	}{
		{name: "no constraints and no owner skips", pod: web("p"), skip: true},
		{name: "ScheduleAnyway only skips", pod: withSpread(web("p"), spread(zone, 1, corev1.ScheduleAnyway, sel)), skip: true},
		{name: "maxSkew 1 across zones",
			pod:      withSpread(web("p"), spread(zone, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"a1", web("e1")}, {"b1", web("e2")}},
			// a:1 b:1 c:0, min 0: placing in a or b makes skew 2.
			want: map[string]string{"a1": ErrReasonConstraintsNotMatch, "a2": ErrReasonConstraintsNotMatch,
				"b1": ErrReasonConstraintsNotMatch, "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "balanced zones accept any",
			pod:      withSpread(web("p"), spread(zone, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"a1", web("e1")}, {"b1", web("e2")}, {"c1", web("e3")}},
			want:     map[string]string{"a1": "", "a2": "", "b1": "", "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "pods of other labels and namespaces do not count",
			pod: withSpread(web("p"), spread(zone, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"a1", testutil.LabeledPod("e1", map[string]string{"app": "db"})},
				{"a1", func() *corev1.Pod { p := web("e2"); p.Namespace = "other"; return p }()}},
			want: map[string]string{"a1": "", "a2": "", "b1": "", "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "a pod that does not match its own selector adds nothing",
			pod:      withSpread(testutil.LabeledPod("p", map[string]string{"app": "other"}), spread(zone, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"a1", web("e1")}},
			want:     map[string]string{"a1": "", "a2": "", "b1": "", "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "minDomains above the domain count makes the global minimum 0",
			pod:      withSpread(web("p"), minDomains(spread(zone, 1, corev1.DoNotSchedule, sel), 4)),
			existing: []placed{{"a1", web("e1")}, {"b1", web("e2")}, {"c1", web("e3")}},
			// 3 domains < 4: min is 0, every domain has 1, so 1+1-0 = 2 > 1.
			want: map[string]string{"a1": ErrReasonConstraintsNotMatch, "a2": ErrReasonConstraintsNotMatch,
				"b1": ErrReasonConstraintsNotMatch, "c1": ErrReasonConstraintsNotMatch, "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "minDomains met behaves as usual",
			pod:      withSpread(web("p"), minDomains(spread(zone, 1, corev1.DoNotSchedule, sel), 3)),
			existing: []placed{{"a1", web("e1")}, {"b1", web("e2")}, {"c1", web("e3")}},
			want:     map[string]string{"a1": "", "a2": "", "b1": "", "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "nodeAffinityPolicy Honor leaves out nodes the selector rejects",
			pod: func() *corev1.Pod {
				p := withSpread(web("p"), spread(zone, 1, corev1.DoNotSchedule, sel))
				p.Spec.NodeSelector = map[string]string{zone: "a"}
				return p
			}(),
			existing: []placed{{"b1", web("e1")}},
			// Zone b's pod does not count: only zone a (0 pods) is a domain,
			// and b1 (left to NodeAffinity to reject) counts 0 too.
			want: map[string]string{"a1": "", "a2": "", "b1": "", "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "nodeAffinityPolicy Ignore counts every node",
			pod: func() *corev1.Pod {
				c := spread(zone, 1, corev1.DoNotSchedule, sel)
				c.NodeAffinityPolicy = &ignore
				p := withSpread(web("p"), c)
				p.Spec.NodeSelector = map[string]string{zone: "a"}
				return p
			}(),
			existing: []placed{{"b1", web("e1")}, {"a1", web("e2")}},
			want:     map[string]string{"a1": ErrReasonConstraintsNotMatch, "a2": ErrReasonConstraintsNotMatch, "b1": ErrReasonConstraintsNotMatch, "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "nodeTaintsPolicy Ignore (default) counts a tainted empty zone",
			nodes:    tainted,
			pod:      withSpread(web("p"), spread(zone, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"a1", web("e1")}, {"b1", web("e2")}},
			want: map[string]string{"a1": ErrReasonConstraintsNotMatch, "a2": ErrReasonConstraintsNotMatch,
				"b1": ErrReasonConstraintsNotMatch, "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "nodeTaintsPolicy Honor leaves the tainted zone out",
			nodes: tainted,
			pod: func() *corev1.Pod {
				c := spread(zone, 1, corev1.DoNotSchedule, sel)
				c.NodeTaintsPolicy = &honor
				return withSpread(web("p"), c)
			}(),
			existing: []placed{{"a1", web("e1")}, {"b1", web("e2")}},
			want:     map[string]string{"a1": "", "a2": "", "b1": "", "c1": "", "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "matchLabelKeys narrows the selector to the pod's revision",
			pod: func() *corev1.Pod {
				c := spread(zone, 1, corev1.DoNotSchedule, sel)
				c.MatchLabelKeys = []string{"rev"}
				return withSpread(testutil.LabeledPod("p", map[string]string{"app": "web", "rev": "2"}), c)
			}(),
			existing: []placed{{"a1", testutil.LabeledPod("old1", map[string]string{"app": "web", "rev": "1"})},
				{"b1", testutil.LabeledPod("old2", map[string]string{"app": "web", "rev": "1"})},
				{"c1", testutil.LabeledPod("new1", map[string]string{"app": "web", "rev": "2"})}},
			want: map[string]string{"a1": "", "a2": "", "b1": "", "c1": ErrReasonConstraintsNotMatch, "nolabel": ErrReasonNodeLabelNotMatch}},
		{name: "a pod being deleted does not count (upstream #87621)",
			nodes:    hostNodes(),
			pod:      withSpread(web("p"), spread(corev1.LabelHostname, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"n1", terminating(web("e1"))}, {"n2", web("e2")}, {"n3", web("e3")}},
			// n1:0 n2:1 n3:1: only n1 keeps the skew within 1.
			want: map[string]string{"n1": "", "n2": ErrReasonConstraintsNotMatch, "n3": ErrReasonConstraintsNotMatch}},
		{name: "three nodes, one replica each: any node takes a fourth",
			nodes:    hostNodes(),
			pod:      withSpread(web("p"), spread(corev1.LabelHostname, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"n1", web("e1")}, {"n2", web("e2")}, {"n3", web("e3")}},
			want:     map[string]string{"n1": "", "n2": "", "n3": ""}},
		{name: "three nodes, one replica on n1: n1 takes no second",
			nodes:    hostNodes(),
			pod:      withSpread(web("p"), spread(corev1.LabelHostname, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"n1", web("e1")}},
			want:     map[string]string{"n1": ErrReasonConstraintsNotMatch, "n2": "", "n3": ""}},
		{name: "a lost node (unreachable, its replica being evicted) left out with nodeTaintsPolicy Honor: 2 and 1 on the others",
			nodes: lostNode(),
			pod: func() *corev1.Pod {
				c := spread(corev1.LabelHostname, 1, corev1.DoNotSchedule, sel)
				c.NodeTaintsPolicy = &honor
				return withSpread(web("p"), c)
			}(),
			existing: []placed{{"n1", terminating(web("e1"))}, {"n2", web("e2")}, {"n3", web("e3")}},
			// n2 and n3 are the domains, 1 each: either takes the
			// replacement (2 and 1, the skew 1). n1, no domain, counts 0
			// here as upstream; TaintToleration rejects it.
			want: map[string]string{"n1": "", "n2": "", "n3": ""}},
		{name: "a lost node counted (nodeTaintsPolicy Ignore): its empty domain holds the others at 1",
			nodes:    lostNode(),
			pod:      withSpread(web("p"), spread(corev1.LabelHostname, 1, corev1.DoNotSchedule, sel)),
			existing: []placed{{"n1", terminating(web("e1"))}, {"n2", web("e2")}, {"n3", web("e3")}},
			// n1 passes this filter; TaintToleration rejects it: the pod
			// waits, as upstream.
			want: map[string]string{"n1": "", "n2": ErrReasonConstraintsNotMatch, "n3": ErrReasonConstraintsNotMatch}},
		{name: "hostname spreading with maxSkew 2",
			pod:      withSpread(web("p"), spread(corev1.LabelHostname, 2, corev1.DoNotSchedule, sel)),
			existing: []placed{{"a1", web("e1")}, {"a1", web("e2")}, {"b1", web("e3")}},
			want:     map[string]string{"a1": ErrReasonConstraintsNotMatch, "a2": "", "b1": "", "c1": "", "nolabel": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := tt.nodes
			if nodes == nil {
				nodes = zoneNodes()
			}
			nis := cluster(nodes, tt.existing)
			pl, err := New(nil, testutil.Handle(framework.Listers{}, nis...))
			if err != nil {
				t.Fatal(err)
			}
			p := pl.(*PodTopologySpread)
			state := framework.NewCycleState()
			st := p.PreFilter(context.Background(), state, tt.pod)
			if tt.skip {
				if !st.IsSkip() {
					t.Fatalf("PreFilter = %v, want Skip", st.Code())
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			got := map[string]string{}
			for _, ni := range nis {
				got[ni.Node().Name] = p.Filter(context.Background(), state, tt.pod, ni).Message()
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func listers(t *testing.T, objs ...any) framework.Listers {
	t.Helper()
	svc := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	rs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Service:
			err = svc.Add(o)
		case *appsv1.ReplicaSet:
			err = rs.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return framework.Listers{Services: corelisters.NewServiceLister(svc), ReplicaSets: appslisters.NewReplicaSetLister(rs)}
}

func ownedBy(p *corev1.Pod, rs string) *corev1.Pod {
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: "rs-uid", Controller: &yes}}
	return p
}

func scores(t *testing.T, p *PodTopologySpread, pod *corev1.Pod, nis []*framework.NodeInfo) []int64 {
	t.Helper()
	state := framework.NewCycleState()
	st := p.PreScore(context.Background(), state, pod, nis)
	if st.IsSkip() {
		return nil
	}
	if !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	list := make(framework.NodeScoreList, len(nis))
	for i, ni := range nis {
		s, st := p.Score(context.Background(), state, pod, ni)
		if !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		list[i] = framework.NodeScore{Name: ni.Node().Name, Score: s}
	}
	if st := p.NormalizeScore(context.Background(), state, pod, list); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	var out []int64
	for _, s := range list {
		out = append(out, s.Score)
	}
	return out
}

func TestScore(t *testing.T) {
	sel := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-123", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []placed
		objs     []any
		args     string
		want     []int64 // a1 a2 b1 c1 nolabel; nil: Skip
	}{
		{name: "no soft constraints and no owner skips", pod: web("p")},
		{name: "DoNotSchedule only skips", pod: withSpread(web("p"), spread(zone, 1, corev1.DoNotSchedule, sel))},
		{name: "ScheduleAnyway by zone prefers the emptier zones",
			pod:      withSpread(web("p"), spread(zone, 1, corev1.ScheduleAnyway, sel)),
			existing: []placed{{"a1", web("e1")}, {"a2", web("e2")}, {"b1", web("e3")}},
			// weight ln(3+2); raw a: 2*1.609=3, b: 2 (1.609 rounded), c: 0; nolabel ignored.
			// normalised 100*(max+min-s)/max: a 0, b 33, c 100.
			want: []int64{0, 0, 33, 100, 0}},
		{name: "ScheduleAnyway with maxSkew 3 waters the differences down",
			pod:      withSpread(web("p"), spread(zone, 3, corev1.ScheduleAnyway, sel)),
			existing: []placed{{"a1", web("e1")}, {"a2", web("e2")}, {"b1", web("e3")}},
			// raw + 2: a 5, b 4, c 2 -> 100*(5+2-s)/5: a 40, b 60, c 100.
			want: []int64{40, 40, 60, 100, 0}},
		{name: "hostname constraint counts per node",
			pod:      withSpread(web("p"), spread(corev1.LabelHostname, 1, corev1.ScheduleAnyway, sel)),
			existing: []placed{{"a1", web("e1")}, {"a1", web("e2")}, {"b1", web("e3")}},
			// 5 nodes: weight ln 7 = 1.946; a1 2*1.946=4, b1 2, others 0.
			want: []int64{0, 100, 50, 100, 100}},
		{name: "system default constraints from the owning ReplicaSet",
			pod:      ownedBy(web("p"), "web-123"),
			objs:     []any{rs},
			existing: []placed{{"a1", web("e1")}, {"a1", web("e2")}, {"b1", web("e3")}},
			// hostname (maxSkew 3, weight ln 7) + zone (maxSkew 5, weight ln 6:
			// a, b, c and nolabel's empty value are domains, as upstream):
			// a1 2*1.946+2 + 2*1.792+4 = 13.5 -> 13; a2 2 + 7.6 -> 10; b1 1.946+2 + 1.792+4 = 9.7 -> 10;
			// c1 2+4 = 6; nolabel 2 (no zone label, so the zone constraint adds nothing).
			// normalised 100*(13+2-s)/13.
			want: []int64{15, 38, 38, 69, 100}},
		{name: "system defaults from a Service selecting the pod",
			pod:      web("p"),
			objs:     []any{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{Selector: sel}}},
			existing: []placed{{"a1", web("e1")}, {"a1", web("e2")}, {"b1", web("e3")}},
			want:     []int64{15, 38, 38, 69, 100}},
		{name: "a Service with a nil selector selects nothing",
			pod:  web("p"),
			objs: []any{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"}}}},
		{name: "List defaulting with configured constraints",
			pod:      ownedBy(web("p"), "web-123"),
			objs:     []any{rs},
			args:     `{"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}]}`,
			existing: []placed{{"a1", web("e1")}, {"a2", web("e2")}, {"b1", web("e3")}},
			// As the zone case above, but nodes without the key are ignored.
			want: []int64{0, 0, 33, 100, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := cluster(zoneNodes(), tt.existing)
			var raw json.RawMessage
			if tt.args != "" {
				raw = json.RawMessage(tt.args)
			}
			pl, err := New(raw, testutil.Handle(listers(t, tt.objs...), nis...))
			if err != nil {
				t.Fatal(err)
			}
			if got := scores(t, pl.(*PodTopologySpread), tt.pod, nis); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("scores = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		args    string
		wantErr string
	}{
		{args: `{"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}`},
		{args: `{"defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}`, wantErr: `when .defaultingType is "System"`},
		{args: `{"defaultingType":"Sometimes"}`, wantErr: `defaultingType: Unsupported value: "Sometimes"`},
		{args: `{"defaultingType":"List","defaultConstraints":[{"maxSkew":0,"topologyKey":"zone","whenUnsatisfiable":"Maybe"}]}`, wantErr: "maxSkew"},
		{args: `{"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{}}]}`, wantErr: "must not define a selector"},
		{args: `{"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},{"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}`, wantErr: "Duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, err := New(json.RawMessage(tt.args), testutil.Handle(framework.Listers{}))
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPreFilterExtensions(t *testing.T) {
	sel := map[string]string{"app": "web"}
	existing := []placed{{"a1", web("e1")}, {"a1", web("e2")}, {"b1", web("e3")}}
	nis := cluster(zoneNodes()[:3], existing)
	pl, err := New(nil, testutil.Handle(framework.Listers{}, nis...))
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*PodTopologySpread)
	pod := withSpread(web("p"), spread(zone, 1, corev1.DoNotSchedule, sel))
	ctx, state := context.Background(), framework.NewCycleState()
	if st := p.PreFilter(ctx, state, pod); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	a1 := nis[0]
	if st := p.Filter(ctx, state, pod, a1); st.IsSuccess() {
		t.Fatal("a1 passes with a:2 b:1")
	}
	// On a copy of the state, removing one zone-a pod makes a:1 b:1.
	copied := state.Clone()
	if st := p.RemovePod(ctx, copied, pod, a1.Pods[0], a1); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if st := p.Filter(ctx, copied, pod, a1); !st.IsSuccess() {
		t.Fatalf("a1 after removal: %s", st.Message())
	}
	if st := p.Filter(ctx, state, pod, a1); st.IsSuccess() {
		t.Fatal("removal on the copy changed the original state")
	}
	if st := p.AddPod(ctx, copied, pod, a1.Pods[0], a1); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if st := p.Filter(ctx, copied, pod, a1); st.IsSuccess() {
		t.Fatal("a1 passes after adding the pod back")
	}
}
