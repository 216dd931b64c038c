package framework

import (
	"encoding/json"
	"fmt"
)

// PluginRef names a plugin in a profile; Weight applies at Score.
// The JSON names are those of KubeSchedulerConfiguration v1.
type PluginRef struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

// PluginSet enables and disables plugins at one extension point; a
// disabled plugin named "*" disables every default plugin there.
type PluginSet struct {
	Enabled  []PluginRef `json:"enabled,omitempty"`
	Disabled []PluginRef `json:"disabled,omitempty"`
}

// Plugins are a profile's plugins per extension point. MultiPoint enables
// a plugin at every extension point it implements.
type Plugins struct {
	PreFilter  PluginSet `json:"preFilter,omitempty"`
	Filter     PluginSet `json:"filter,omitempty"`
	PostFilter PluginSet `json:"postFilter,omitempty"`
	PreScore   PluginSet `json:"preScore,omitempty"`
	Score      PluginSet `json:"score,omitempty"`
	Reserve    PluginSet `json:"reserve,omitempty"`
	PreBind    PluginSet `json:"preBind,omitempty"`
	MultiPoint PluginSet `json:"multiPoint,omitempty"`
}

// Profile is what New builds a framework from: the scheduler name, the
// plugins (already merged with the defaults) and their arguments.
type Profile struct {
	SchedulerName string
	Plugins       Plugins
	// PluginArgs holds each plugin's arguments as JSON, by plugin name.
	PluginArgs map[string]json.RawMessage
	// PercentageOfNodesToScore overrides the scheduler-wide setting when set.
	PercentageOfNodesToScore *int32
}

// extensionPoint is one extension point's set and whether a plugin
// implements it.
type extensionPoint struct {
	name       string
	set        *PluginSet
	implements func(Plugin) bool
}

func extensionPoints(p *Plugins) []extensionPoint {
	is := func(f func(Plugin) bool) func(Plugin) bool { return f }
	return []extensionPoint{
		{"PreFilter", &p.PreFilter, is(func(pl Plugin) bool { _, ok := pl.(PreFilterPlugin); return ok })},
		{"Filter", &p.Filter, is(func(pl Plugin) bool { _, ok := pl.(FilterPlugin); return ok })},
		{"PostFilter", &p.PostFilter, is(func(pl Plugin) bool { _, ok := pl.(PostFilterPlugin); return ok })},
		{"PreScore", &p.PreScore, is(func(pl Plugin) bool { _, ok := pl.(PreScorePlugin); return ok })},
		{"Score", &p.Score, is(func(pl Plugin) bool { _, ok := pl.(ScorePlugin); return ok })},
		{"Reserve", &p.Reserve, is(func(pl Plugin) bool { _, ok := pl.(ReservePlugin); return ok })},
		{"PreBind", &p.PreBind, is(func(pl Plugin) bool { _, ok := pl.(PreBindPlugin); return ok })},
	}
}

// expand returns the plugin names enabled at one extension point, in
// upstream's order: plugins named both there and in MultiPoint (in the
// extension point's order), then the rest of MultiPoint, then the rest of
// the extension point's own list.
func expand(ep extensionPoint, multiPoint []PluginRef, plugins map[string]Plugin) ([]string, error) {
	specific := map[string]bool{}
	for _, ref := range ep.set.Enabled {
		if specific[ref.Name] {
			return nil, fmt.Errorf("plugin %q already registered as %q", ref.Name, ep.name)
		}
		if !ep.implements(plugins[ref.Name]) {
			return nil, fmt.Errorf("plugin %q does not extend %s plugin", ref.Name, ep.name)
		}
		specific[ref.Name] = true
	}
	disabled := map[string]bool{}
	for _, ref := range ep.set.Disabled {
		disabled[ref.Name] = true
	}
	var overrides, fromMulti []string
	seenMulti := map[string]bool{}
	if !disabled["*"] {
		for _, ref := range multiPoint {
			if !ep.implements(plugins[ref.Name]) || disabled[ref.Name] {
				continue
			}
			if specific[ref.Name] {
				overrides = append(overrides, ref.Name)
				continue
			}
			if seenMulti[ref.Name] {
				return nil, fmt.Errorf("plugin %q already registered as %q", ref.Name, "MultiPoint")
			}
			seenMulti[ref.Name] = true
			fromMulti = append(fromMulti, ref.Name)
		}
	}
	isOverride := map[string]bool{}
	for _, n := range overrides {
		isOverride[n] = true
	}
	var ordered []string
	for _, ref := range ep.set.Enabled {
		if isOverride[ref.Name] {
			ordered = append(ordered, ref.Name)
		}
	}
	ordered = append(ordered, fromMulti...)
	for _, ref := range ep.set.Enabled {
		if !isOverride[ref.Name] {
			ordered = append(ordered, ref.Name)
		}
	}
	return ordered, nil
}

// scoreWeights takes a plugin's weight from Score when named there, else
// from MultiPoint; zero means 1, as upstream.
func scoreWeights(p *Plugins) (map[string]int64, error) {
	w := map[string]int64{}
	for _, list := range [][]PluginRef{p.MultiPoint.Enabled, p.Score.Enabled} {
		for _, ref := range list {
			if ref.Weight < 0 {
				return nil, fmt.Errorf("plugin %q: score weight %d must not be negative", ref.Name, ref.Weight)
			}
			w[ref.Name] = int64(ref.Weight)
			if w[ref.Name] == 0 {
				w[ref.Name] = 1
			}
		}
	}
	return w, nil
}
