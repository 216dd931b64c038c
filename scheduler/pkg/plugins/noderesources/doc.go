// Package noderesources holds the resource plugins: NodeResourcesFit
// (filter: the pod's requests must fit the node's allocatable minus what
// the node's pods already request; score: LeastAllocated) and
// NodeResourcesBalancedAllocation (score: prefer nodes whose cpu and
// memory fractions stay close to each other).
package noderesources
