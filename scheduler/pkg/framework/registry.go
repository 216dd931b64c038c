package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// Factory builds a plugin from its arguments (JSON, nil when the profile
// gives none) and the framework handle.
type Factory func(args json.RawMessage, h Handle) (Plugin, error)

// NoArgs adapts the constructor of a plugin that takes no arguments; it
// rejects any.
func NoArgs(f func() (Plugin, error)) Factory {
	return func(args json.RawMessage, _ Handle) (Plugin, error) {
		if len(args) > 0 {
			return nil, fmt.Errorf("the plugin takes no arguments")
		}
		return f()
	}
}

// Registry maps plugin names to factories. Setup builds one; there is no
// package-level registration.
type Registry map[string]Factory

// Register adds a factory; a name may be registered once.
func (r Registry) Register(name string, f Factory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("a plugin named %q is already registered", name)
	}
	r[name] = f
	return nil
}

// Option configures New.
type Option func(*Framework)

// WithClientSet gives plugins (preemption) an API client.
func WithClientSet(c kubernetes.Interface) Option { return func(f *Framework) { f.client = c } }

// WithEventRecorder gives plugins the profile's event recorder.
func WithEventRecorder(r record.EventRecorder) Option { return func(f *Framework) { f.recorder = r } }

// FrameworkHandle is the Handle New passes to factories: the shared
// Handle plus the framework being built, its client and event recorder,
// for plugins (preemption) that run the other plugins and act on the API.
type FrameworkHandle interface {
	Handle
	Framework() *Framework
	ClientSet() kubernetes.Interface
	EventRecorder() record.EventRecorder
}

type frameworkHandle struct {
	Handle
	f *Framework
}

func (h *frameworkHandle) Framework() *Framework               { return h.f }
func (h *frameworkHandle) ClientSet() kubernetes.Interface     { return h.f.client }
func (h *frameworkHandle) EventRecorder() record.EventRecorder { return h.f.recorder }

// Framework runs a profile's plugins.
type Framework struct {
	nominator   *Nominator
	client      kubernetes.Interface
	recorder    record.EventRecorder
	profile     string
	percentage  *int32
	preFilters  []PreFilterPlugin
	filters     []FilterPlugin
	postFilters []PostFilterPlugin
	preScores   []PreScorePlugin
	scorers     []ScorePlugin
	reservers   []ReservePlugin
	preBinders  []PreBindPlugin
	weights     map[string]int64
}

// New builds a framework for a profile: it builds every plugin the
// profile enables (once, even when it serves several extension points)
// from the registry with its arguments, and expands MultiPoint as upstream.
func New(r Registry, p Profile, h Handle, opts ...Option) (*Framework, error) {
	f := &Framework{profile: p.SchedulerName, percentage: p.PercentageOfNodesToScore}
	for _, o := range opts {
		o(f)
	}
	h = &frameworkHandle{Handle: h, f: f}
	plugins := map[string]Plugin{}
	eps := extensionPoints(&p.Plugins)
	for _, list := range [][]PluginRef{p.Plugins.MultiPoint.Enabled, p.Plugins.PreFilter.Enabled, p.Plugins.Filter.Enabled,
		p.Plugins.PostFilter.Enabled, p.Plugins.PreScore.Enabled, p.Plugins.Score.Enabled, p.Plugins.Reserve.Enabled, p.Plugins.PreBind.Enabled} {
		for _, ref := range list {
			if _, ok := plugins[ref.Name]; ok {
				continue
			}
			factory, ok := r[ref.Name]
			if !ok {
				return nil, fmt.Errorf("profile %q: plugin %q is not registered", p.SchedulerName, ref.Name)
			}
			pl, err := factory(p.PluginArgs[ref.Name], h)
			if err != nil {
				return nil, fmt.Errorf("profile %q: building plugin %q: %w", p.SchedulerName, ref.Name, err)
			}
			plugins[ref.Name] = pl
		}
	}
	weights, err := scoreWeights(&p.Plugins)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.SchedulerName, err)
	}
	f.weights = weights
	for _, ep := range eps {
		names, err := expand(ep, p.Plugins.MultiPoint.Enabled, plugins)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", p.SchedulerName, err)
		}
		for _, n := range names {
			f.add(ep.name, plugins[n])
		}
	}
	return f, nil
}

func (f *Framework) add(point string, p Plugin) {
	switch point {
	case "PreFilter":
		f.preFilters = append(f.preFilters, p.(PreFilterPlugin))
	case "Filter":
		f.filters = append(f.filters, p.(FilterPlugin))
	case "PostFilter":
		f.postFilters = append(f.postFilters, p.(PostFilterPlugin))
	case "PreScore":
		f.preScores = append(f.preScores, p.(PreScorePlugin))
	case "Score":
		f.scorers = append(f.scorers, p.(ScorePlugin))
		if f.weights[p.Name()] == 0 {
			f.weights[p.Name()] = 1
		}
	case "Reserve":
		f.reservers = append(f.reservers, p.(ReservePlugin))
	case "PreBind":
		f.preBinders = append(f.preBinders, p.(PreBindPlugin))
	}
}

// ProfileName is the scheduler name this framework serves.
func (f *Framework) ProfileName() string { return f.profile }

// PercentageOfNodesToScore is the profile's setting, nil when unset.
func (f *Framework) PercentageOfNodesToScore() *int32 { return f.percentage }

// PluginNames lists the plugins at each extension point (tests, logs).
func (f *Framework) PluginNames() map[string][]string {
	out := map[string][]string{}
	for _, p := range f.preFilters {
		out["PreFilter"] = append(out["PreFilter"], p.Name())
	}
	for _, p := range f.filters {
		out["Filter"] = append(out["Filter"], p.Name())
	}
	for _, p := range f.postFilters {
		out["PostFilter"] = append(out["PostFilter"], p.Name())
	}
	for _, p := range f.preScores {
		out["PreScore"] = append(out["PreScore"], p.Name())
	}
	for _, p := range f.scorers {
		out["Score"] = append(out["Score"], fmt.Sprintf("%s:%d", p.Name(), f.weights[p.Name()]))
	}
	for _, p := range f.reservers {
		out["Reserve"] = append(out["Reserve"], p.Name())
	}
	for _, p := range f.preBinders {
		out["PreBind"] = append(out["PreBind"], p.Name())
	}
	return out
}

// RunPreFilterPlugins runs the PreFilter plugins; the first failure stops.
// A plugin that returns Skip has its Filter skipped for this pod.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod) *Status {
	for _, p := range f.preFilters {
		s := p.PreFilter(ctx, state, pod)
		if s.IsSkip() {
			state.skipFilter(p.Name())
			continue
		}
		if !s.IsSuccess() {
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunFilterPlugins runs the filters on one node; the first failure stops.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, ni *NodeInfo) *Status {
	for _, p := range f.filters {
		if state.filterSkipped(p.Name()) {
			continue
		}
		if s := p.Filter(ctx, state, pod, ni); !s.IsSuccess() {
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// HasPostFilterPlugins is true when a PostFilter plugin is enabled.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilters) > 0 }

// RunPostFilterPlugins runs the PostFilter plugins until one succeeds,
// one fails with an error or UnschedulableAndUnresolvable; otherwise it
// returns the last result and the plugins' reasons, as upstream.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeStatus map[string]*Status) (*PostFilterResult, *Status) {
	var result *PostFilterResult
	var reasons []string
	rejector := ""
	for _, p := range f.postFilters {
		r, s := p.PostFilter(ctx, state, pod, nodeStatus)
		switch {
		case s.IsSuccess():
			return r, nil
		case s.Code() == UnschedulableAndUnresolvable:
			return r, s.WithPlugin(p.Name())
		case !s.IsRejected():
			return nil, s.WithPlugin(p.Name())
		}
		if r != nil {
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
		if rejector == "" {
			rejector = p.Name()
		}
	}
	return result, NewStatus(Unschedulable, reasons...).WithPlugin(rejector)
}

// RunPreFilterExtensionAddPod tells the PreFilter plugins that ran (not
// skipped) and have extensions that podToAdd is now on nodeInfo.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, pod *corev1.Pod, podToAdd *PodInfo, ni *NodeInfo) *Status {
	for _, p := range f.preFilters {
		ext, ok := p.(PreFilterExtensions)
		if !ok || state.filterSkipped(p.Name()) {
			continue
		}
		if s := ext.AddPod(ctx, state, pod, podToAdd, ni); !s.IsSuccess() {
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod is RunPreFilterExtensionAddPod for a pod
// taken off nodeInfo.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, pod *corev1.Pod, podToRemove *PodInfo, ni *NodeInfo) *Status {
	for _, p := range f.preFilters {
		ext, ok := p.(PreFilterExtensions)
		if !ok || state.filterSkipped(p.Name()) {
			continue
		}
		if s := ext.RemovePod(ctx, state, pod, podToRemove, ni); !s.IsSuccess() {
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunPreScorePlugins runs the PreScore plugins with the feasible nodes.
// A plugin that returns Skip has its Score skipped for this pod.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status {
	for _, p := range f.preScores {
		s := p.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			state.skipScore(p.Name())
			continue
		}
		if !s.IsSuccess() {
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// HasScorePlugins is true when scoring can tell nodes apart.
func (f *Framework) HasScorePlugins() bool { return len(f.scorers) > 0 }

// RunScorePlugins scores each node with each plugin, normalises and
// weights, and returns the totals in the order of nodes.
func (f *Framework) RunScorePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) (NodeScoreList, *Status) {
	totals := make(NodeScoreList, len(nodes))
	for i, n := range nodes {
		totals[i].Name = n.Node().Name
	}
	for _, p := range f.scorers {
		if state.scoreSkipped(p.Name()) {
			continue
		}
		scores := make(NodeScoreList, len(nodes))
		for i, n := range nodes {
			s, st := p.Score(ctx, state, pod, n)
			if !st.IsSuccess() {
				return nil, st.WithPlugin(p.Name())
			}
			scores[i] = NodeScore{Name: n.Node().Name, Score: s}
		}
		if ext := p.ScoreExtensions(); ext != nil {
			if st := ext.NormalizeScore(ctx, state, pod, scores); !st.IsSuccess() {
				return nil, st.WithPlugin(p.Name())
			}
		}
		w := f.weights[p.Name()]
		for i := range scores {
			if scores[i].Score < MinNodeScore || scores[i].Score > MaxNodeScore {
				return nil, NewStatus(Error, fmt.Sprintf("plugin %q returns an invalid score %d for node %q, it should be in [%d, %d]",
					p.Name(), scores[i].Score, scores[i].Name, MinNodeScore, MaxNodeScore)).WithPlugin(p.Name())
			}
			totals[i].Score += scores[i].Score * w
		}
	}
	return totals, nil
}

// SelectHost returns the node with the highest score; ties are broken at
// random so equal nodes share the load.
func SelectHost(scores NodeScoreList, rnd *rand.Rand) (string, error) {
	if len(scores) == 0 {
		return "", fmt.Errorf("empty priority list")
	}
	best := scores[0]
	ties := 1
	for _, s := range scores[1:] {
		switch {
		case s.Score > best.Score:
			best, ties = s, 1
		case s.Score == best.Score:
			ties++
			if rnd.IntN(ties) == 0 {
				best = s
			}
		}
	}
	return best.Name, nil
}

// Diagnosis records why each node rejected a pod.
type Diagnosis struct {
	NodeToStatus map[string]*Status
	// PreFilterMsg is set when a PreFilter rejected the pod for all nodes.
	PreFilterMsg string
	// PostFilterMsg is what the PostFilter plugins (preemption) said.
	PostFilterMsg string
	// AbsentNodesStatus is the status of nodes not in NodeToStatus; nil
	// means they are not counted.
	AbsentNodesStatus *Status
}

// FitError is the error for a pod that fits no node.
type FitError struct {
	Pod         *corev1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error renders the message as upstream does:
// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: v}."
// with "<count> <reason>" sorted as strings.
func (f *FitError) Error() string {
	msg := fmt.Sprintf("0/%v nodes are available:", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		msg += fmt.Sprintf(" %v.", f.Diagnosis.PreFilterMsg)
	} else {
		counts := map[string]int{}
		for _, st := range f.Diagnosis.NodeToStatus {
			for _, r := range st.Reasons() {
				counts[r]++
			}
		}
		if absent := f.NumAllNodes - len(f.Diagnosis.NodeToStatus); absent > 0 {
			for _, r := range f.Diagnosis.AbsentNodesStatus.Reasons() {
				counts[r] += absent
			}
		}
		var parts []string
		for r, c := range counts {
			parts = append(parts, fmt.Sprintf("%v %v", c, r))
		}
		sort.Strings(parts)
		if len(parts) > 0 {
			msg += fmt.Sprintf(" %v.", joinComma(parts))
		}
	}
	if f.Diagnosis.PostFilterMsg != "" {
		msg += fmt.Sprintf(" %v.", f.Diagnosis.PostFilterMsg)
	}
	return msg
}

func joinComma(s []string) string {
	out := ""
	for i, p := range s {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}
