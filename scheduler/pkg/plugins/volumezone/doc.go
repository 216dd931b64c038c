// Package volumezone is upstream's VolumeZone plugin: a pod whose bound
// claims' volumes carry zone or region labels (topology.kubernetes.io/zone,
// topology.kubernetes.io/region and their failure-domain.beta spellings;
// several values joined by "__") runs only on nodes labelled with one of
// those values.
package volumezone
