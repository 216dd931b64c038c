// Package framework is the scheduler's plugin framework: one interface per
// extension point (PreFilter, Filter, Score with NormalizeScore), the Status
// that every plugin returns, the NodeInfo that filters and scorers read, and
// the Registry that Setup fills with plugin factories.
//
// A scheduling cycle for one pod runs every PreFilter plugin once, then every
// Filter plugin against each node (a node is feasible when all return
// Success), then every Score plugin on each feasible node; each plugin's
// scores are normalised to 0..MaxNodeScore and multiplied by its weight, and
// the node with the highest sum wins.
package framework
