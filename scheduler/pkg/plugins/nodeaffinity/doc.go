// Package nodeaffinity holds the NodeAffinity plugin: the filter checks
// spec.nodeSelector and the required node affinity, the scorer adds the
// weights of the preferred terms that the node matches.
package nodeaffinity
