package app

import (
	"skiff.dev/scheduler/pkg/framework"
	"skiff.dev/scheduler/pkg/plugins/nodeaffinity"
	"skiff.dev/scheduler/pkg/plugins/nodename"
	"skiff.dev/scheduler/pkg/plugins/nodeports"
	"skiff.dev/scheduler/pkg/plugins/noderesources"
	"skiff.dev/scheduler/pkg/plugins/nodeunschedulable"
	"skiff.dev/scheduler/pkg/plugins/tainttoleration"
)

// NewRegistry returns the in-tree plugins.
func NewRegistry() (framework.Registry, error) {
	r := framework.Registry{}
	for name, f := range map[string]framework.Factory{
		nodeunschedulable.Name:               nodeunschedulable.New,
		nodename.Name:                        nodename.New,
		tainttoleration.Name:                 tainttoleration.New,
		nodeaffinity.Name:                    nodeaffinity.New,
		nodeports.Name:                       nodeports.New,
		noderesources.Name:                   noderesources.NewFit,
		noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
	} {
		if err := r.Register(name, f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// DefaultPlugins is the default profile: upstream's filter order and
// score weights.
func DefaultPlugins() []framework.PluginConfig {
	return []framework.PluginConfig{
		{Name: nodeunschedulable.Name},
		{Name: nodename.Name},
		{Name: tainttoleration.Name, Weight: 3},
		{Name: nodeaffinity.Name, Weight: 2},
		{Name: nodeports.Name},
		{Name: noderesources.Name, Weight: 1},
		{Name: noderesources.BalancedAllocationName, Weight: 1},
	}
}
