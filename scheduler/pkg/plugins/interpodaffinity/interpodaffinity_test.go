package interpodaffinity

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/testutil"
)

const zone = "topology.kubernetes.io/zone"

func term(key string, sel map[string]string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: sel}, TopologyKey: key}
}

func withAffinity(p *corev1.Pod, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) *corev1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required, PreferredDuringSchedulingIgnoredDuringExecution: preferred}
	return p
}

func withAntiAffinity(p *corev1.Pod, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) *corev1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required, PreferredDuringSchedulingIgnoredDuringExecution: preferred}
	return p
}

func inNamespace(p *corev1.Pod, ns string) *corev1.Pod {
	p.Namespace = ns
	return p
}

func nsLister(t *testing.T, nss ...*corev1.Namespace) corelisters.NamespaceLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, ns := range nss {
		if err := idx.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewNamespaceLister(idx)
}

// placed is a pod on a node.
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

func TestFilter(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.LabeledNode("a1", map[string]string{zone: "a", corev1.LabelHostname: "a1"}),
		testutil.LabeledNode("a2", map[string]string{zone: "a", corev1.LabelHostname: "a2"}),
		testutil.LabeledNode("b1", map[string]string{zone: "b", corev1.LabelHostname: "b1"}),
		testutil.LabeledNode("nozone", map[string]string{corev1.LabelHostname: "nozone"}),
	}
	web := map[string]string{"app": "web"}
	db := map[string]string{"app": "db"}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []placed
		ns       []*corev1.Namespace
		want     map[string]string // node -> reason ("" passes)
		skip     bool
	}{
		{name: "no affinity anywhere skips", pod: testutil.LabeledPod("p", web),
			existing: []placed{{"a1", testutil.LabeledPod("e", web)}}, skip: true},
		{name: "anti-affinity against an existing pod, by hostname",
			pod:      withAntiAffinity(testutil.LabeledPod("p", web), []corev1.PodAffinityTerm{term(corev1.LabelHostname, web)}, nil),
			existing: []placed{{"a1", testutil.LabeledPod("e", web)}},
			want:     map[string]string{"a1": ErrReasonAntiAffinityRulesNotMatch, "a2": "", "b1": "", "nozone": ""}},
		{name: "anti-affinity by zone rejects the whole zone",
			pod:      withAntiAffinity(testutil.LabeledPod("p", web), []corev1.PodAffinityTerm{term(zone, web)}, nil),
			existing: []placed{{"a1", testutil.LabeledPod("e", web)}},
			want:     map[string]string{"a1": ErrReasonAntiAffinityRulesNotMatch, "a2": ErrReasonAntiAffinityRulesNotMatch, "b1": "", "nozone": ""}},
		{name: "existing pod's anti-affinity rejects the incoming pod",
			pod:      testutil.LabeledPod("p", web),
			existing: []placed{{"b1", withAntiAffinity(testutil.LabeledPod("e", db), []corev1.PodAffinityTerm{term(zone, web)}, nil)}},
			want:     map[string]string{"a1": "", "a2": "", "b1": ErrReasonExistingAntiAffinityRulesNotMatch, "nozone": ""}},
		{name: "existing anti-affinity in another namespace does not apply",
			pod:      inNamespace(testutil.LabeledPod("p", web), "other"),
			existing: []placed{{"b1", withAntiAffinity(testutil.LabeledPod("e", db), []corev1.PodAffinityTerm{term(zone, web)}, nil)}},
			skip:     true},
		{name: "affinity by zone to an existing pod",
			pod:      withAffinity(testutil.LabeledPod("p", web), []corev1.PodAffinityTerm{term(zone, db)}, nil),
			existing: []placed{{"a2", testutil.LabeledPod("e", db)}},
			want: map[string]string{"a1": "", "a2": "", "b1": ErrReasonAffinityRulesNotMatch,
				"nozone": ErrReasonAffinityRulesNotMatch}},
		{name: "affinity with no matching pod anywhere and not matching itself",
			pod: withAffinity(testutil.LabeledPod("p", web), []corev1.PodAffinityTerm{term(zone, db)}, nil),
			want: map[string]string{"a1": ErrReasonAffinityRulesNotMatch, "a2": ErrReasonAffinityRulesNotMatch,
				"b1": ErrReasonAffinityRulesNotMatch, "nozone": ErrReasonAffinityRulesNotMatch}},
		{name: "first pod of a group with affinity to itself passes where the topology key exists",
			pod:  withAffinity(testutil.LabeledPod("p", web), []corev1.PodAffinityTerm{term(zone, web)}, nil),
			want: map[string]string{"a1": "", "a2": "", "b1": "", "nozone": ErrReasonAffinityRulesNotMatch}},
		{name: "affinity to a pod in another namespace named by the term",
			pod: withAffinity(testutil.LabeledPod("p", web), []corev1.PodAffinityTerm{func() corev1.PodAffinityTerm {
				t := term(zone, db)
				t.Namespaces = []string{"other"}
				return t
			}()}, nil),
			existing: []placed{{"b1", inNamespace(testutil.LabeledPod("e", db), "other")}, {"a1", testutil.LabeledPod("e2", db)}},
			want: map[string]string{"a1": ErrReasonAffinityRulesNotMatch, "a2": ErrReasonAffinityRulesNotMatch, "b1": "",
				"nozone": ErrReasonAffinityRulesNotMatch}},
		{name: "anti-affinity with a namespace selector",
			pod: withAntiAffinity(testutil.LabeledPod("p", web), []corev1.PodAffinityTerm{func() corev1.PodAffinityTerm {
				t := term(zone, db)
				t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
				return t
			}()}, nil),
			ns: []*corev1.Namespace{
				{ObjectMeta: metav1.ObjectMeta{Name: "team-x", Labels: map[string]string{"team": "x"}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
			},
			existing: []placed{{"a1", inNamespace(testutil.LabeledPod("e", db), "team-x")}, {"b1", testutil.LabeledPod("e2", db)}},
			want: map[string]string{"a1": ErrReasonAntiAffinityRulesNotMatch, "a2": ErrReasonAntiAffinityRulesNotMatch, "b1": "",
				"nozone": ""}},
		{name: "existing anti-affinity with an empty namespace selector matches every namespace",
			pod: inNamespace(testutil.LabeledPod("p", web), "other"),
			existing: []placed{{"a1", withAntiAffinity(testutil.LabeledPod("e", db), []corev1.PodAffinityTerm{func() corev1.PodAffinityTerm {
				t := term(corev1.LabelHostname, web)
				t.NamespaceSelector = &metav1.LabelSelector{}
				return t
			}()}, nil)}},
			want: map[string]string{"a1": ErrReasonExistingAntiAffinityRulesNotMatch, "a2": "", "b1": "", "nozone": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := cluster(nodes, tt.existing)
			pl, err := New(nil, testutil.Handle(framework.Listers{Namespaces: nsLister(t, tt.ns...)}, nis...))
			if err != nil {
				t.Fatal(err)
			}
			p := pl.(*InterPodAffinity)
			state := framework.NewCycleState()
			st := p.PreFilter(context.Background(), state, tt.pod)
			if tt.skip {
				if !st.IsSkip() {
					t.Fatalf("PreFilter = %v, want Skip", st.Code())
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("PreFilter: %v %s", st.Code(), st.Message())
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

func TestScore(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.LabeledNode("a1", map[string]string{zone: "a"}),
		testutil.LabeledNode("b1", map[string]string{zone: "b"}),
		testutil.LabeledNode("c1", map[string]string{zone: "c"}),
	}
	web := map[string]string{"app": "web"}
	db := map[string]string{"app": "db"}
	weighted := func(w int32, key string, sel map[string]string) []corev1.WeightedPodAffinityTerm {
		return []corev1.WeightedPodAffinityTerm{{Weight: w, PodAffinityTerm: term(key, sel)}}
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		existing []placed
		args     string
		want     []int64 // a1, b1, c1; nil: PreScore skips
	}{
		{name: "no affinity anywhere skips", pod: testutil.LabeledPod("p", web),
			existing: []placed{{"a1", testutil.LabeledPod("e", db)}}},
		{name: "preferred affinity to the zone with the db pod",
			pod:      withAffinity(testutil.LabeledPod("p", web), nil, weighted(5, zone, db)),
			existing: []placed{{"b1", testutil.LabeledPod("e", db)}},
			want:     []int64{0, 100, 0}},
		{name: "preferred anti-affinity away from web pods, weighed by count",
			pod: withAntiAffinity(testutil.LabeledPod("p", web), nil, weighted(10, zone, web)),
			existing: []placed{{"a1", testutil.LabeledPod("e1", web)}, {"a1", testutil.LabeledPod("e2", web)},
				{"b1", testutil.LabeledPod("e3", web)}},
			// raw: a -20, b -10, c 0 -> normalised from [min, max] to [0, 100].
			want: []int64{0, 50, 100}},
		{name: "affinity and anti-affinity combine",
			pod: withAntiAffinity(withAffinity(testutil.LabeledPod("p", web), nil, weighted(8, zone, db)), nil, weighted(4, zone, web)),
			existing: []placed{{"a1", testutil.LabeledPod("e1", db)}, {"a1", testutil.LabeledPod("e2", web)},
				{"b1", testutil.LabeledPod("e3", web)}},
			// raw: a 8-4=4, b -4, c 0.
			want: []int64{100, 0, 50}},
		{name: "existing pod's required affinity counts hardPodAffinityWeight",
			pod:      testutil.LabeledPod("p", web),
			existing: []placed{{"c1", withAffinity(testutil.LabeledPod("e", db), []corev1.PodAffinityTerm{term(zone, web)}, nil)}},
			want:     []int64{0, 0, 100}},
		{name: "hardPodAffinityWeight 0 turns that off",
			pod:      testutil.LabeledPod("p", web),
			existing: []placed{{"c1", withAffinity(testutil.LabeledPod("e", db), []corev1.PodAffinityTerm{term(zone, web)}, nil)}},
			args:     `{"hardPodAffinityWeight":0}`},
		{name: "existing pod's preferred anti-affinity repels",
			pod:      testutil.LabeledPod("p", web),
			existing: []placed{{"a1", withAntiAffinity(testutil.LabeledPod("e", db), nil, weighted(3, zone, web))}},
			want:     []int64{0, 100, 100}},
		{name: "ignorePreferredTermsOfExistingPods skips pods without terms",
			pod:      testutil.LabeledPod("p", web),
			existing: []placed{{"a1", withAntiAffinity(testutil.LabeledPod("e", db), nil, weighted(3, zone, web))}},
			args:     `{"ignorePreferredTermsOfExistingPods":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := cluster(nodes, tt.existing)
			var raw json.RawMessage
			if tt.args != "" {
				raw = json.RawMessage(tt.args)
			}
			pl, err := New(raw, testutil.Handle(framework.Listers{}, nis...))
			if err != nil {
				t.Fatal(err)
			}
			p := pl.(*InterPodAffinity)
			state := framework.NewCycleState()
			st := p.PreScore(context.Background(), state, tt.pod, nis)
			if tt.want == nil {
				if !st.IsSkip() {
					t.Fatalf("PreScore = %v, want Skip", st.Code())
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			scores := make(framework.NodeScoreList, len(nis))
			for i, ni := range nis {
				s, st := p.Score(context.Background(), state, tt.pod, ni)
				if !st.IsSuccess() {
					t.Fatal(st.Message())
				}
				scores[i] = framework.NodeScore{Name: ni.Node().Name, Score: s}
			}
			if st := p.NormalizeScore(context.Background(), state, tt.pod, scores); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			var got []int64
			for _, s := range scores {
				got = append(got, s.Score)
			}
			if !reflect.DeepEqual(got, tt.want) {
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
		{args: `{"hardPodAffinityWeight": 101}`, wantErr: "not in valid range [0, 100]"},
		{args: `{"hardPodAfinityWeight": 1}`, wantErr: `unknown field "hardPodAfinityWeight"`},
		{args: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"InterPodAffinityArgs","hardPodAffinityWeight": 5}`},
		{args: `{"kind":"NodeResourcesFitArgs"}`, wantErr: "kind"},
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
