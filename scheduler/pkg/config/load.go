package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"skiff.dev/scheduler/pkg/framework"
)

// DefaultSchedulerName is the name of a profile that names none.
const DefaultSchedulerName = "default-scheduler"

// Config is a loaded file: the profiles ready for framework.New and the
// rest as read.
type Config struct {
	File     *KubeSchedulerConfiguration
	Profiles []framework.Profile
}

// LoadFile reads and checks a file; see Load.
func LoadFile(path string, defaults framework.Plugins, registered func(name string) bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the scheduler configuration: %w", err)
	}
	c, err := Load(data, defaults, registered)
	if err != nil {
		return nil, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	return c, nil
}

// Load parses a KubeSchedulerConfiguration, rejecting unknown fields,
// merges each profile's plugins with defaults and checks that every plugin
// named is registered. A file without profiles gets one default profile.
func Load(data []byte, defaults framework.Plugins, registered func(name string) bool) (*Config, error) {
	var f KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if f.APIVersion != APIVersion || f.Kind != Kind {
		return nil, fmt.Errorf("apiVersion %q kind %q: want apiVersion %q kind %q", f.APIVersion, f.Kind, APIVersion, Kind)
	}
	if len(f.Profiles) == 0 {
		f.Profiles = []Profile{{}}
	}
	if err := validate(&f); err != nil {
		return nil, err
	}
	c := &Config{File: &f}
	var errs []error
	for i := range f.Profiles {
		p, err := profile(&f.Profiles[i], defaults, registered)
		if err != nil {
			errs = append(errs, fmt.Errorf("profiles[%d]: %w", i, err))
			continue
		}
		c.Profiles = append(c.Profiles, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

func validPercentage(p *int32) bool { return p == nil || (*p >= 0 && *p <= 100) }

func validate(f *KubeSchedulerConfiguration) error {
	var errs []error
	if !validPercentage(f.PercentageOfNodesToScore) {
		errs = append(errs, fmt.Errorf("percentageOfNodesToScore: Invalid value: %d: not in valid range [0-100]", *f.PercentageOfNodesToScore))
	}
	if f.PodInitialBackoffSeconds != nil && *f.PodInitialBackoffSeconds <= 0 {
		errs = append(errs, fmt.Errorf("podInitialBackoffSeconds: Invalid value: %d: must be greater than 0", *f.PodInitialBackoffSeconds))
	}
	if f.PodMaxBackoffSeconds != nil && f.PodInitialBackoffSeconds != nil && *f.PodMaxBackoffSeconds < *f.PodInitialBackoffSeconds {
		errs = append(errs, fmt.Errorf("podMaxBackoffSeconds: Invalid value: %d: must be greater than or equal to PodInitialBackoffSeconds", *f.PodMaxBackoffSeconds))
	}
	if le := f.LeaderElection; le != nil && le.ResourceLock != "" && le.ResourceLock != "leases" {
		errs = append(errs, fmt.Errorf("leaderElection.resourceLock: Unsupported value: %q: supported values: \"leases\"", le.ResourceLock))
	}
	names := map[string]bool{}
	for i := range f.Profiles {
		p := &f.Profiles[i]
		if p.SchedulerName == "" {
			p.SchedulerName = DefaultSchedulerName
		}
		if names[p.SchedulerName] {
			errs = append(errs, fmt.Errorf("profiles[%d].schedulerName: Duplicate value: %q", i, p.SchedulerName))
		}
		names[p.SchedulerName] = true
		if !validPercentage(p.PercentageOfNodesToScore) {
			errs = append(errs, fmt.Errorf("profiles[%d].percentageOfNodesToScore: Invalid value: %d: not in valid range [0-100]", i, *p.PercentageOfNodesToScore))
		}
	}
	return errors.Join(errs...)
}

// profile turns a file profile into a framework profile.
func profile(p *Profile, defaults framework.Plugins, registered func(string) bool) (framework.Profile, error) {
	custom := framework.Plugins{}
	if p.Plugins != nil {
		custom = *p.Plugins
	}
	merged := Merge(defaults, custom)
	var errs []error
	for _, set := range []struct {
		point string
		set   framework.PluginSet
	}{{"preFilter", custom.PreFilter}, {"filter", custom.Filter}, {"postFilter", custom.PostFilter},
		{"preScore", custom.PreScore}, {"score", custom.Score}, {"multiPoint", custom.MultiPoint}} {
		for j, ref := range set.set.Enabled {
			if !registered(ref.Name) {
				errs = append(errs, fmt.Errorf("plugins.%s.enabled[%d]: unknown plugin %q", set.point, j, ref.Name))
			}
			if ref.Weight < 0 {
				errs = append(errs, fmt.Errorf("plugins.%s.enabled[%d].weight: Invalid value: %d: must not be negative", set.point, j, ref.Weight))
			}
		}
		for j, ref := range set.set.Disabled {
			if ref.Name != "*" && !registered(ref.Name) {
				errs = append(errs, fmt.Errorf("plugins.%s.disabled[%d]: unknown plugin %q", set.point, j, ref.Name))
			}
		}
	}
	args := map[string]json.RawMessage{}
	for j, pc := range p.PluginConfig {
		if !registered(pc.Name) {
			errs = append(errs, fmt.Errorf("pluginConfig[%d]: unknown plugin %q", j, pc.Name))
			continue
		}
		if _, dup := args[pc.Name]; dup {
			errs = append(errs, fmt.Errorf("pluginConfig[%d]: Duplicate value: %q", j, pc.Name))
			continue
		}
		args[pc.Name] = pc.Args
	}
	if err := errors.Join(errs...); err != nil {
		return framework.Profile{}, err
	}
	return framework.Profile{SchedulerName: p.SchedulerName, Plugins: merged, PluginArgs: args,
		PercentageOfNodesToScore: p.PercentageOfNodesToScore}, nil
}

// Merge merges custom plugins into the defaults per extension point, as
// upstream's v1 defaulting: a default plugin stays enabled unless disabled
// by name or by "*"; a custom plugin that names a default one replaces it
// in place (with its weight); other custom plugins follow. The disabled
// lists are kept, so MultiPoint expansion can honour them.
func Merge(defaults, custom framework.Plugins) framework.Plugins {
	return framework.Plugins{
		PreFilter:  mergeSet(defaults.PreFilter, custom.PreFilter),
		Filter:     mergeSet(defaults.Filter, custom.Filter),
		PostFilter: mergeSet(defaults.PostFilter, custom.PostFilter),
		PreScore:   mergeSet(defaults.PreScore, custom.PreScore),
		Score:      mergeSet(defaults.Score, custom.Score),
		MultiPoint: mergeSet(defaults.MultiPoint, custom.MultiPoint),
	}
}

func mergeSet(def, custom framework.PluginSet) framework.PluginSet {
	disabled := map[string]bool{}
	out := framework.PluginSet{}
	for _, d := range custom.Disabled {
		disabled[d.Name] = true
		out.Disabled = append(out.Disabled, framework.PluginRef{Name: d.Name})
	}
	customIndex := map[string]int{}
	for i, e := range custom.Enabled {
		customIndex[e.Name] = i
	}
	replaced := map[int]bool{}
	if !disabled["*"] {
		for _, d := range def.Enabled {
			if disabled[d.Name] {
				continue
			}
			if i, ok := customIndex[d.Name]; ok {
				d = custom.Enabled[i]
				replaced[i] = true
			}
			out.Enabled = append(out.Enabled, d)
		}
	}
	for i, e := range custom.Enabled {
		if !replaced[i] {
			out.Enabled = append(out.Enabled, e)
		}
	}
	return out
}
