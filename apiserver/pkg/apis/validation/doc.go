// Package validation checks objects of every kind skiff serves the way
// upstream Kubernetes v1.32 does, reporting the same field paths, error types
// and (where practical) the same messages, so that kubectl and client-go see
// the same "Invalid" Status they would see from kube-apiserver.
//
// Upstream validates its internal types; skiff has none, so the rules here are
// written against the versioned k8s.io/api types. Where the two differ in
// shape (hostNetwork, hostPID, hostIPC, shareProcessNamespace and hostUsers
// live in the PodSpec in v1 but in the pod security context internally; a
// Secret's stringData is merged into data by conversion) the rule is applied
// to what the internal object would hold, and the error carries the path that
// upstream reports, quirks included (for example "metadata.taints" for a
// node's taints, or "spec.LoadBalancerSourceRanges").
//
// Walkthrough: each kind's registry package (pkg/registry/<group>/<kind>)
// names its per-kind functions here (ValidatePod, ValidateReplicaSetUpdate,
// ...) in its strategy; no function of this package switches on the kind.
// Every per-kind function starts with the object meta rules (name format per
// kind, namespace, labels, annotations, owner references, finalizers; on
// update the immutable meta fields), then checks the spec. Validation expects
// a defaulted object, as upstream does: it reports a missing
// terminationMessagePolicy or restartPolicy as Required, because by then the
// defaulter should have set it. Options that upstream ties to v1.32 feature
// gates take their v1.32 default (relaxed environment variable names on,
// pod-level resources off, ...), and ratcheting options that upstream derives
// from the old object on update (an invalid value already stored stays
// acceptable) are derived the same way.
//
// Nothing here panics on any input: nil optional pointers are skipped, typed
// nil objects are reported as an internal error, and unknown kinds validate
// as nil.
package validation
