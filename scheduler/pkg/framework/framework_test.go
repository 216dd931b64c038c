package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFitErrorMessage(t *testing.T) {
	taint := "node(s) had untolerated taint {dedicated: gpu}"
	tests := []struct {
		name   string
		nodes  int
		status map[string]*Status
		pre    string
		want   string
	}{
		{name: "upstream example", nodes: 3, status: map[string]*Status{
			"a": NewStatus(Unschedulable, "Insufficient cpu"),
			"b": NewStatus(UnschedulableAndUnresolvable, taint),
			"c": NewStatus(UnschedulableAndUnresolvable, taint),
		}, want: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}."},
		{name: "sorted as strings, several reasons per node", nodes: 4, status: map[string]*Status{
			"a": NewStatus(Unschedulable, "Too many pods", "Insufficient memory"),
			"b": NewStatus(Unschedulable, "Insufficient memory"),
			"c": NewStatus(Unschedulable, "Insufficient cpu"),
			"d": NewStatus(UnschedulableAndUnresolvable, "node(s) were unschedulable"),
		}, want: "0/4 nodes are available: 1 Insufficient cpu, 1 Too many pods, 1 node(s) were unschedulable, 2 Insufficient memory."},
		{name: "prefilter", nodes: 2, pre: "pod has unbound immediate PersistentVolumeClaims", want: "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &FitError{NumAllNodes: tt.nodes, Diagnosis: Diagnosis{NodeToStatus: tt.status, PreFilterMsg: tt.pre}}
			if got := e.Error(); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDefaultNormalizeScore(t *testing.T) {
	tests := []struct {
		name    string
		in      []int64
		reverse bool
		want    []int64
	}{
		{name: "scale", in: []int64{1, 2, 4}, want: []int64{25, 50, 100}},
		{name: "reverse", in: []int64{1, 2, 4}, reverse: true, want: []int64{75, 50, 0}},
		{name: "all zero", in: []int64{0, 0}, want: []int64{0, 0}},
		{name: "all zero reversed", in: []int64{0, 0}, reverse: true, want: []int64{100, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := make(NodeScoreList, len(tt.in))
			for i, v := range tt.in {
				s[i].Score = v
			}
			DefaultNormalizeScore(MaxNodeScore, tt.reverse, s)
			for i := range tt.want {
				if s[i].Score != tt.want[i] {
					t.Fatalf("got %v, want %v", s, tt.want)
				}
			}
		})
	}
}

type fakeScore struct {
	name   string
	scores map[string]int64
	ext    ScoreExtensions
}

func (f *fakeScore) Name() string { return f.name }
func (f *fakeScore) Score(_ context.Context, _ *CycleState, _ *corev1.Pod, ni *NodeInfo) (int64, *Status) {
	return f.scores[ni.Node().Name], nil
}
func (f *fakeScore) ScoreExtensions() ScoreExtensions { return f.ext }

type doubler struct{}

func (doubler) NormalizeScore(_ context.Context, _ *CycleState, _ *corev1.Pod, s NodeScoreList) *Status {
	for i := range s {
		s[i].Score *= 2
	}
	return nil
}

type fakeFilter struct {
	name string
	deny map[string]Code
}

func (f *fakeFilter) Name() string { return f.name }
func (f *fakeFilter) Filter(_ context.Context, _ *CycleState, _ *corev1.Pod, ni *NodeInfo) *Status {
	if c, ok := f.deny[ni.Node().Name]; ok {
		return NewStatus(c, f.name+" says no")
	}
	return nil
}

func nodeInfo(name string) *NodeInfo {
	ni := NewNodeInfo()
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return ni
}

func TestFramework(t *testing.T) {
	r := Registry{}
	for _, p := range []Plugin{
		&fakeFilter{name: "F1", deny: map[string]Code{"b": Unschedulable}},
		&fakeFilter{name: "F2", deny: map[string]Code{"b": Error, "c": UnschedulableAndUnresolvable}},
		&fakeScore{name: "S1", scores: map[string]int64{"a": 10, "c": 40}, ext: doubler{}},
		&fakeScore{name: "S2", scores: map[string]int64{"a": 50, "c": 0}},
	} {
		p := p
		if err := r.Register(p.Name(), NoArgs(func() (Plugin, error) { return p, nil })); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Register("F1", nil); err == nil {
		t.Fatal("registering twice succeeded")
	}
	h := NewHandle(Listers{})
	if _, err := New(r, multiPoint("x", PluginRef{Name: "missing"}), h); err == nil {
		t.Fatal("an unknown plugin was accepted")
	}
	f, err := New(r, multiPoint("default-scheduler", PluginRef{Name: "F1"}, PluginRef{Name: "F2"}, PluginRef{Name: "S1", Weight: 3}, PluginRef{Name: "S2"}), h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, state, pod := context.Background(), NewCycleState(), &corev1.Pod{}
	if st := f.RunFilterPlugins(ctx, state, pod, nodeInfo("b")); st.Code() != Unschedulable || st.Plugin() != "F1" {
		t.Fatalf("first failing filter: %v from %q", st.Code(), st.Plugin())
	}
	if st := f.RunFilterPlugins(ctx, state, pod, nodeInfo("c")); st.Code() != UnschedulableAndUnresolvable || st.Plugin() != "F2" {
		t.Fatalf("c: %v from %q", st.Code(), st.Plugin())
	}
	scores, st := f.RunScorePlugins(ctx, state, pod, []*NodeInfo{nodeInfo("a"), nodeInfo("c")})
	if !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	// a: 10*2*3 + 50 = 110; c: 40*2*3 + 0 = 240.
	if scores[0].Score != 110 || scores[1].Score != 240 {
		t.Fatalf("scores = %v", scores)
	}
	host, err := SelectHost(scores, rand.New(rand.NewPCG(1, 2)))
	if err != nil || host != "c" {
		t.Fatalf("host = %q, %v", host, err)
	}
	// Scores out of range are an error.
	bad, _ := New(Registry{"S": NoArgs(func() (Plugin, error) { return &fakeScore{name: "S", scores: map[string]int64{"a": 101}}, nil })}, multiPoint("x", PluginRef{Name: "S"}), h)
	if _, st := bad.RunScorePlugins(ctx, state, pod, []*NodeInfo{nodeInfo("a")}); st.Code() != Error {
		t.Fatalf("out-of-range score: %v", st.Code())
	}
}

func multiPoint(name string, refs ...PluginRef) Profile {
	return Profile{SchedulerName: name, Plugins: Plugins{MultiPoint: PluginSet{Enabled: refs}}}
}

// fakeAll implements PreFilter, Filter, PreScore and Score; its PreFilter
// and PreScore return Skip when told to.
type fakeAll struct {
	name                  string
	skipFilter, skipScore bool
	filtered, scored      int
}

func (f *fakeAll) Name() string { return f.name }
func (f *fakeAll) PreFilter(context.Context, *CycleState, *corev1.Pod) *Status {
	if f.skipFilter {
		return NewStatus(Skip)
	}
	return nil
}
func (f *fakeAll) Filter(context.Context, *CycleState, *corev1.Pod, *NodeInfo) *Status {
	f.filtered++
	return nil
}
func (f *fakeAll) PreScore(context.Context, *CycleState, *corev1.Pod, []*NodeInfo) *Status {
	if f.skipScore {
		return NewStatus(Skip)
	}
	return nil
}
func (f *fakeAll) Score(context.Context, *CycleState, *corev1.Pod, *NodeInfo) (int64, *Status) {
	f.scored++
	return 1, nil
}
func (f *fakeAll) ScoreExtensions() ScoreExtensions { return nil }

func TestMultiPointExpansion(t *testing.T) {
	r := Registry{}
	for _, n := range []string{"A", "B", "C"} {
		n := n
		r[n] = NoArgs(func() (Plugin, error) { return &fakeAll{name: n}, nil })
	}
	r["F"] = NoArgs(func() (Plugin, error) { return &fakeFilter{name: "F"}, nil })
	r["Args"] = func(args json.RawMessage, _ Handle) (Plugin, error) {
		if string(args) != `{"x":1}` {
			return nil, fmt.Errorf("args = %s", args)
		}
		return &fakeAll{name: "Args"}, nil
	}
	defaults := []PluginRef{{Name: "A", Weight: 3}, {Name: "B", Weight: 2}}
	tests := []struct {
		name    string
		plugins Plugins
		args    map[string]json.RawMessage
		want    map[string][]string
		wantErr string
	}{
		{name: "multipoint everywhere with weights", plugins: Plugins{MultiPoint: PluginSet{Enabled: defaults}},
			want: map[string][]string{"PreFilter": {"A", "B"}, "Filter": {"A", "B"}, "PreScore": {"A", "B"}, "Score": {"A:3", "B:2"}}},
		{name: "score disabled with star, one re-enabled with a weight", plugins: Plugins{
			MultiPoint: PluginSet{Enabled: defaults},
			Score:      PluginSet{Disabled: []PluginRef{{Name: "*"}}, Enabled: []PluginRef{{Name: "B", Weight: 7}}},
		}, want: map[string][]string{"PreFilter": {"A", "B"}, "Filter": {"A", "B"}, "PreScore": {"A", "B"}, "Score": {"B:7"}}},
		{name: "disabled by name at one point", plugins: Plugins{
			MultiPoint: PluginSet{Enabled: defaults},
			Filter:     PluginSet{Disabled: []PluginRef{{Name: "A"}}},
		}, want: map[string][]string{"PreFilter": {"A", "B"}, "Filter": {"B"}, "PreScore": {"A", "B"}, "Score": {"A:3", "B:2"}}},
		{name: "specific override comes first", plugins: Plugins{
			MultiPoint: PluginSet{Enabled: defaults},
			Filter:     PluginSet{Enabled: []PluginRef{{Name: "F"}, {Name: "B"}}},
		}, want: map[string][]string{"PreFilter": {"A", "B"}, "Filter": {"B", "A", "F"}, "PreScore": {"A", "B"}, "Score": {"A:3", "B:2"}}},
		{name: "args reach the factory", plugins: Plugins{MultiPoint: PluginSet{Enabled: []PluginRef{{Name: "Args"}}}},
			args: map[string]json.RawMessage{"Args": json.RawMessage(`{"x":1}`)},
			want: map[string][]string{"PreFilter": {"Args"}, "Filter": {"Args"}, "PreScore": {"Args"}, "Score": {"Args:1"}}},
		{name: "bad args", plugins: Plugins{MultiPoint: PluginSet{Enabled: []PluginRef{{Name: "Args"}}}},
			args: map[string]json.RawMessage{"Args": json.RawMessage(`{"x":2}`)}, wantErr: `building plugin "Args": args = {"x":2}`},
		{name: "args for a plugin without any", plugins: Plugins{MultiPoint: PluginSet{Enabled: []PluginRef{{Name: "A"}}}},
			args: map[string]json.RawMessage{"A": json.RawMessage(`{}`)}, wantErr: "takes no arguments"},
		{name: "score for a filter-only plugin", plugins: Plugins{Score: PluginSet{Enabled: []PluginRef{{Name: "F"}}}},
			wantErr: `plugin "F" does not extend Score plugin`},
		{name: "twice in multipoint", plugins: Plugins{MultiPoint: PluginSet{Enabled: []PluginRef{{Name: "A"}, {Name: "A"}}}},
			wantErr: "already registered"},
		{name: "negative weight", plugins: Plugins{MultiPoint: PluginSet{Enabled: []PluginRef{{Name: "A", Weight: -1}}}},
			wantErr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(r, Profile{SchedulerName: "p", Plugins: tt.plugins, PluginArgs: tt.args}, NewHandle(Listers{}))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.PluginNames(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("plugins = %v\nwant      %v", got, tt.want)
			}
		})
	}
}

func TestSkipStatus(t *testing.T) {
	a := &fakeAll{name: "A", skipFilter: true, skipScore: true}
	b := &fakeAll{name: "B"}
	r := Registry{"A": NoArgs(func() (Plugin, error) { return a, nil }), "B": NoArgs(func() (Plugin, error) { return b, nil })}
	f, err := New(r, multiPoint("p", PluginRef{Name: "A"}, PluginRef{Name: "B"}), NewHandle(Listers{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, state, pod := context.Background(), NewCycleState(), &corev1.Pod{}
	nodes := []*NodeInfo{nodeInfo("a"), nodeInfo("b")}
	if st := f.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	for _, n := range nodes {
		if st := f.RunFilterPlugins(ctx, state, pod, n); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
	}
	if st := f.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	scores, st := f.RunScorePlugins(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if a.filtered != 0 || a.scored != 0 || b.filtered != 2 || b.scored != 2 {
		t.Fatalf("skipped plugin ran: A filtered %d scored %d, B filtered %d scored %d", a.filtered, a.scored, b.filtered, b.scored)
	}
	if scores[0].Score != 1 || scores[1].Score != 1 {
		t.Fatalf("scores = %v, want only B's 1 each", scores)
	}
}

func TestSelectHostTies(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{}
	for i := 0; i < 200; i++ {
		h, _ := SelectHost(NodeScoreList{{"a", 5}, {"b", 9}, {"c", 9}}, rnd)
		seen[h]++
	}
	if seen["a"] != 0 || seen["b"] == 0 || seen["c"] == 0 {
		t.Fatalf("ties not shared: %v", seen)
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	c := func(cpu string) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
	}
	sidecar := func(cpu string) corev1.Container {
		x := c(cpu)
		x.RestartPolicy = &always
		return x
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want int64
	}{
		{name: "sum of containers", spec: corev1.PodSpec{Containers: []corev1.Container{c("100m"), c("200m")}}, want: 300},
		{name: "init max", spec: corev1.PodSpec{Containers: []corev1.Container{c("100m")}, InitContainers: []corev1.Container{c("500m"), c("300m")}}, want: 500},
		{name: "containers win", spec: corev1.PodSpec{Containers: []corev1.Container{c("1")}, InitContainers: []corev1.Container{c("500m")}}, want: 1000},
		{name: "sidecar", spec: corev1.PodSpec{Containers: []corev1.Container{c("100m")}, InitContainers: []corev1.Container{sidecar("200m"), c("250m")}}, want: 450},
		{name: "overhead", spec: corev1.PodSpec{Containers: []corev1.Container{c("100m")}, Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}, want: 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewResource(PodRequests(&corev1.Pod{Spec: tt.spec}, nil))
			if r.MilliCPU != tt.want {
				t.Fatalf("cpu = %dm, want %dm", r.MilliCPU, tt.want)
			}
		})
	}
	// Defaults apply per container that names no request.
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c("300m"), {}}}}
	nz := NewResource(PodRequests(p, NonZeroDefaults()))
	if nz.MilliCPU != 400 || nz.Memory != 2*DefaultMemoryRequest {
		t.Fatalf("non-zero = %+v", nz)
	}
}
