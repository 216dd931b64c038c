// Package cm arranges the cgroups of pods as upstream's kubelet does: a
// "kubepods" cgroup under the kubelet's cgroup root, "burstable" and
// "besteffort" below it, and one cgroup per pod ("pod<uid>") under its QoS
// class (Guaranteed pods directly under kubepods), holding the pod's
// containers. The pod cgroup carries the pod's CPU shares and, when every
// container has one, its CPU and memory limits. Both cgroup v1 (one
// hierarchy per controller) and the unified v2 hierarchy are handled.
package cm
