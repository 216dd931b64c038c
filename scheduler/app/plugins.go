package app

import (
	"encoding/json"

	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/defaultpreemption"
	"skiff.dev/scheduler/pkg/plugins/imagelocality"
	"skiff.dev/scheduler/pkg/plugins/interpodaffinity"
	"skiff.dev/scheduler/pkg/plugins/nodeaffinity"
	"skiff.dev/scheduler/pkg/plugins/nodename"
	"skiff.dev/scheduler/pkg/plugins/nodeports"
	"skiff.dev/scheduler/pkg/plugins/noderesources"
	"skiff.dev/scheduler/pkg/plugins/nodeunschedulable"
	"skiff.dev/scheduler/pkg/plugins/podtopologyspread"
	"skiff.dev/scheduler/pkg/plugins/tainttoleration"
	"skiff.dev/scheduler/pkg/plugins/volumebinding"
	"skiff.dev/scheduler/pkg/plugins/volumerestrictions"
	"skiff.dev/scheduler/pkg/plugins/volumezone"
)

// NewRegistry returns the in-tree plugins.
func NewRegistry() (framework.Registry, error) {
	r := framework.Registry{}
	for name, f := range map[string]framework.Factory{
		nodeunschedulable.Name:               framework.NoArgs(nodeunschedulable.New),
		nodename.Name:                        framework.NoArgs(nodename.New),
		tainttoleration.Name:                 framework.NoArgs(tainttoleration.New),
		nodeaffinity.Name:                    framework.NoArgs(nodeaffinity.New),
		nodeports.Name:                       framework.NoArgs(nodeports.New),
		noderesources.Name:                   noderesources.NewFit,
		noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
		podtopologyspread.Name:               podtopologyspread.New,
		interpodaffinity.Name:                interpodaffinity.New,
		imagelocality.Name:                   imagelocality.New,
		defaultpreemption.Name:               defaultpreemption.New,
		volumerestrictions.Name: func(_ json.RawMessage, h framework.Handle) (framework.Plugin, error) {
			return volumerestrictions.New(h)
		},
		volumebinding.Name: volumebinding.New,
		volumezone.Name: func(_ json.RawMessage, h framework.Handle) (framework.Plugin, error) {
			return volumezone.New(h)
		},
	} {
		if err := r.Register(name, f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// DefaultPlugins is upstream v1.32's default profile (the plugins skiff
// has), all in MultiPoint: upstream's order, which is the filter order,
// and its score weights.
func DefaultPlugins() framework.Plugins {
	return framework.Plugins{MultiPoint: framework.PluginSet{Enabled: []framework.PluginRef{
		{Name: nodeunschedulable.Name},
		{Name: nodename.Name},
		{Name: tainttoleration.Name, Weight: 3},
		{Name: nodeaffinity.Name, Weight: 2},
		{Name: nodeports.Name},
		{Name: noderesources.Name, Weight: 1},
		{Name: volumerestrictions.Name},
		{Name: volumebinding.Name},
		{Name: volumezone.Name},
		{Name: podtopologyspread.Name, Weight: 2},
		{Name: interpodaffinity.Name, Weight: 2},
		{Name: defaultpreemption.Name},
		{Name: noderesources.BalancedAllocationName, Weight: 1},
		{Name: imagelocality.Name, Weight: 1},
	}}}
}
