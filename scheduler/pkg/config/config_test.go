package config

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"skiff.dev/scheduler/pkg/framework"
)

var defaults = framework.Plugins{MultiPoint: framework.PluginSet{Enabled: []framework.PluginRef{
	{Name: "NodeResourcesFit", Weight: 1}, {Name: "PodTopologySpread", Weight: 2},
	{Name: "InterPodAffinity", Weight: 2}, {Name: "ImageLocality", Weight: 1},
}}}

func registered(name string) bool {
	for _, ref := range defaults.MultiPoint.Enabled {
		if ref.Name == name {
			return true
		}
	}
	return false
}

func TestLoadGood(t *testing.T) {
	c, err := LoadFile(filepath.Join("testdata", "good.yaml"), defaults, registered)
	if err != nil {
		t.Fatal(err)
	}
	f := c.File
	if *f.PercentageOfNodesToScore != 50 || *f.PodInitialBackoffSeconds != 2 || *f.PodMaxBackoffSeconds != 20 {
		t.Errorf("top level: %+v", f)
	}
	if cc := f.ClientConnection; cc.Kubeconfig != "/etc/skiff/scheduler.kubeconfig" || cc.QPS != 100 || cc.Burst != 200 {
		t.Errorf("clientConnection: %+v", cc)
	}
	if le := f.LeaderElection; !*le.LeaderElect || le.LeaseDuration.Duration != 20*time.Second || le.ResourceName != "my-scheduler" {
		t.Errorf("leaderElection: %+v", le)
	}
	if len(c.Profiles) != 3 {
		t.Fatalf("%d profiles", len(c.Profiles))
	}
	def, pack, noSpread := c.Profiles[0], c.Profiles[1], c.Profiles[2]
	if def.SchedulerName != "default-scheduler" || !reflect.DeepEqual(def.Plugins.MultiPoint.Enabled, defaults.MultiPoint.Enabled) {
		t.Errorf("default profile: %+v", def)
	}
	if pack.SchedulerName != "bin-packing" || *pack.PercentageOfNodesToScore != 100 {
		t.Errorf("bin-packing: %+v", pack)
	}
	wantScore := framework.PluginSet{
		Enabled:  []framework.PluginRef{{Name: "NodeResourcesFit", Weight: 5}, {Name: "ImageLocality"}},
		Disabled: []framework.PluginRef{{Name: "*"}},
	}
	if !reflect.DeepEqual(pack.Plugins.Score, wantScore) {
		t.Errorf("bin-packing score = %+v, want %+v", pack.Plugins.Score, wantScore)
	}
	var fitArgs map[string]any
	if err := json.Unmarshal(pack.PluginArgs["NodeResourcesFit"], &fitArgs); err != nil {
		t.Fatal(err)
	}
	if fitArgs["scoringStrategy"].(map[string]any)["type"] != "MostAllocated" {
		t.Errorf("NodeResourcesFit args = %v", fitArgs)
	}
	if _, ok := pack.PluginArgs["PodTopologySpread"]; !ok {
		t.Errorf("PodTopologySpread args missing")
	}
	wantMulti := []framework.PluginRef{{Name: "NodeResourcesFit", Weight: 1}, {Name: "InterPodAffinity", Weight: 2}, {Name: "ImageLocality", Weight: 1}}
	if !reflect.DeepEqual(noSpread.Plugins.MultiPoint.Enabled, wantMulti) {
		t.Errorf("no-spread multiPoint = %+v, want %+v", noSpread.Plugins.MultiPoint.Enabled, wantMulti)
	}
	if !reflect.DeepEqual(noSpread.Plugins.Filter.Disabled, []framework.PluginRef{{Name: "InterPodAffinity"}}) {
		t.Errorf("no-spread filter = %+v", noSpread.Plugins.Filter)
	}
}

func TestLoadMinimal(t *testing.T) {
	c, err := LoadFile(filepath.Join("testdata", "minimal.yaml"), defaults, registered)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Profiles) != 1 || c.Profiles[0].SchedulerName != DefaultSchedulerName ||
		!reflect.DeepEqual(c.Profiles[0].Plugins, defaults) {
		t.Fatalf("profiles = %+v", c.Profiles)
	}
}

func TestLoadBad(t *testing.T) {
	tests := []struct {
		file    string
		wantErr string
	}{
		{file: "unknown-plugin.yaml", wantErr: `profiles[0]: plugins.score.enabled[0]: unknown plugin "NodeResourcesMostAllocated"`},
		{file: "unknown-field.yaml", wantErr: `unknown field "plugin"`},
		{file: "wrong-kind.yaml", wantErr: `want apiVersion "kubescheduler.config.k8s.io/v1"`},
		{file: "duplicate-profile.yaml", wantErr: `profiles[1].schedulerName: Duplicate value: "a"`},
		{file: "bad-percentage.yaml", wantErr: "percentageOfNodesToScore: Invalid value: 120"},
		{file: "unknown-plugin-config.yaml", wantErr: `pluginConfig[0]: unknown plugin "VolumeBinding"`},
		{file: "not-yaml.yaml", wantErr: "decoding"},
		{file: "missing.yaml", wantErr: "reading the scheduler configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := LoadFile(filepath.Join("testdata", tt.file), defaults, registered)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	def := framework.PluginSet{Enabled: []framework.PluginRef{{Name: "A", Weight: 1}, {Name: "B", Weight: 2}, {Name: "C", Weight: 3}}}
	tests := []struct {
		name   string
		custom framework.PluginSet
		want   framework.PluginSet
	}{
		{name: "none", want: def},
		{name: "disable one", custom: framework.PluginSet{Disabled: []framework.PluginRef{{Name: "B"}}},
			want: framework.PluginSet{Enabled: []framework.PluginRef{{Name: "A", Weight: 1}, {Name: "C", Weight: 3}}, Disabled: []framework.PluginRef{{Name: "B"}}}},
		{name: "disable all, enable one",
			custom: framework.PluginSet{Disabled: []framework.PluginRef{{Name: "*"}}, Enabled: []framework.PluginRef{{Name: "C", Weight: 9}}},
			want:   framework.PluginSet{Enabled: []framework.PluginRef{{Name: "C", Weight: 9}}, Disabled: []framework.PluginRef{{Name: "*"}}}},
		{name: "re-weigh in place, add a new one at the end",
			custom: framework.PluginSet{Enabled: []framework.PluginRef{{Name: "D"}, {Name: "B", Weight: 7}}},
			want:   framework.PluginSet{Enabled: []framework.PluginRef{{Name: "A", Weight: 1}, {Name: "B", Weight: 7}, {Name: "C", Weight: 3}, {Name: "D"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(framework.Plugins{MultiPoint: def}, framework.Plugins{MultiPoint: tt.custom}).MultiPoint
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
