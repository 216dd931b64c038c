// Package defaults fills in the fields that upstream Kubernetes v1.32 defaults
// when an object is created or updated, for every kind skiff serves.
//
// skiff serves the versioned k8s.io/api types directly, with no internal
// version in between, so this package does in one pass what upstream does with
// its generated defaulters (zz_generated.defaults.go), the hand-written
// SetDefaults_* functions in pkg/apis/<group>/v1/defaults.go, and the few
// normalisations that upstream's v1 <-> internal conversion makes visible to
// clients (a Secret's stringData merged into data, a pod's deprecated
// serviceAccount kept equal to serviceAccountName, podIP/podIPs and
// podCIDR/podCIDRs kept in step).
//
// Walkthrough: each kind's registry package (pkg/registry/<group>/<kind>)
// names its defaulting function here, and the store calls it through the
// kind's row of the resource table. Kinds that embed a pod template (ReplicaSet, Deployment) reuse
// DefaultPodSpec, which applies exactly what upstream applies to a PodTemplate:
// the PodSpec defaults and everything nested in it (containers, probes,
// volumes, resource rounding), but not the Pod-only defaults (requests copied
// from limits, enableServiceLinks, host ports under hostNetwork), which upstream
// runs only for a Pod and which DefaultPod adds on top.
//
// Defaulting is idempotent and never fails: nil pointers in optional fields are
// left alone or filled, never dereferenced. Values that upstream leaves to
// strategies or allocators (a Service's clusterIPs, ipFamilies and
// ipFamilyPolicy, node ports, a Pod's priority and preemptionPolicy) are not
// touched here.
package defaults
