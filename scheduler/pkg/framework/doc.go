// Package framework is the scheduler's plugin framework: one interface per
// extension point (PreFilter with optional AddPod/RemovePod extensions,
// Filter, PostFilter, PreScore, Score with NormalizeScore), the Status that
// every plugin returns, the NodeInfo and Snapshot that plugins read, the
// Registry that Setup fills with plugin factories, and the profile types
// (Plugins, PluginSet, PluginRef) that KubeSchedulerConfiguration uses.
//
// New builds a framework for one profile: it builds each enabled plugin
// once with its arguments and a Handle (the cycle's Snapshot of every node,
// the listers), then expands MultiPoint to every extension point a plugin
// implements, honouring per-point enabled and disabled lists as upstream.
//
// A scheduling cycle for one pod runs every PreFilter plugin once (a plugin
// that returns Skip has its Filter skipped), then every Filter plugin
// against each node (a node is feasible when all return Success). If no
// node is feasible the PostFilter plugins (preemption) run. Otherwise the
// PreScore plugins run once with the feasible nodes (Skip skips that
// plugin's Score), then every Score plugin on each feasible node; each
// plugin's scores are normalised to 0..MaxNodeScore and multiplied by its
// weight, and the node with the highest sum wins. Plugins that look beyond
// one node count what they need once per cycle in PreFilter or PreScore.
package framework
