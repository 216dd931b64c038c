// Package volumebinding is upstream's VolumeBinding plugin: a pod goes
// only where its PersistentVolumeClaims can be satisfied.
//
// PreFilter reads the pod's claims (persistentVolumeClaim volumes and the
// <pod>-<volume> claims of ephemeral volumes): a missing or deleted claim,
// or an unbound claim of an Immediate class, makes the pod unschedulable
// with upstream's words. Filter checks, per node, the node affinity of the
// volumes of bound claims, and finds for every unbound WaitForFirstConsumer
// claim either an Available volume that fits on that node (the smallest,
// as the binder picks) or a class that can provision there. Reserve keeps
// the chosen node's decisions; PreBind writes them - spec.claimRef on the
// chosen static volumes (bound-by-controller), the
// volume.kubernetes.io/selected-node annotation on claims to provision -
// and waits, up to BindTimeout, until the binder reports every claim
// Bound, so the kubelet never sees the pod before its volumes.
package volumebinding
