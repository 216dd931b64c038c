package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Factory builds a plugin.
type Factory func() (Plugin, error)

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

// PluginConfig enables a plugin in a profile; Weight applies to scoring.
type PluginConfig struct {
	Name   string
	Weight int64
}

// Framework runs a profile's plugins.
type Framework struct {
	profile    string
	preFilters []PreFilterPlugin
	filters    []FilterPlugin
	scorers    []ScorePlugin
	weights    map[string]int64
}

// New builds a framework with the given plugins, in order, from the registry.
func New(profile string, r Registry, plugins []PluginConfig) (*Framework, error) {
	f := &Framework{profile: profile, weights: map[string]int64{}}
	seen := map[string]bool{}
	for _, pc := range plugins {
		if seen[pc.Name] {
			return nil, fmt.Errorf("plugin %q enabled twice", pc.Name)
		}
		seen[pc.Name] = true
		factory, ok := r[pc.Name]
		if !ok {
			return nil, fmt.Errorf("plugin %q is not registered", pc.Name)
		}
		p, err := factory()
		if err != nil {
			return nil, fmt.Errorf("building plugin %q: %w", pc.Name, err)
		}
		used := false
		if pf, ok := p.(PreFilterPlugin); ok {
			f.preFilters = append(f.preFilters, pf)
			used = true
		}
		if fp, ok := p.(FilterPlugin); ok {
			f.filters = append(f.filters, fp)
			used = true
		}
		if sp, ok := p.(ScorePlugin); ok {
			w := pc.Weight
			if w == 0 {
				w = 1
			}
			if w < 0 {
				return nil, fmt.Errorf("plugin %q: weight must not be negative", pc.Name)
			}
			f.scorers = append(f.scorers, sp)
			f.weights[p.Name()] = w
			used = true
		}
		if !used {
			return nil, fmt.Errorf("plugin %q implements no extension point", pc.Name)
		}
	}
	return f, nil
}

// ProfileName is the scheduler name this framework serves.
func (f *Framework) ProfileName() string { return f.profile }

// RunPreFilterPlugins runs the PreFilter plugins; the first failure stops.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod) *Status {
	for _, p := range f.preFilters {
		if s := p.PreFilter(ctx, state, pod); !s.IsSuccess() && !s.IsSkip() {
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunFilterPlugins runs the filters on one node; the first failure stops.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, ni *NodeInfo) *Status {
	for _, p := range f.filters {
		if s := p.Filter(ctx, state, pod, ni); !s.IsSuccess() {
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
		return msg + fmt.Sprintf(" %v.", f.Diagnosis.PreFilterMsg)
	}
	counts := map[string]int{}
	for _, st := range f.Diagnosis.NodeToStatus {
		for _, r := range st.Reasons() {
			counts[r]++
		}
	}
	var parts []string
	for r, c := range counts {
		parts = append(parts, fmt.Sprintf("%v %v", c, r))
	}
	sort.Strings(parts)
	return msg + fmt.Sprintf(" %v.", joinComma(parts))
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
