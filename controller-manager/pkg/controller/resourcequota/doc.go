// Package resourcequota is the resource quota controller: it keeps each
// ResourceQuota's status.hard equal to spec.hard and status.used equal to
// what the objects of its namespace really use, as upstream's
// pkg/controller/resourcequota does.
//
// The API server charges a quota in admission when an object is created
// and gives the charge back when it is deleted; this controller is what
// makes status.used true again after anything admission cannot see (a pod
// that finished, a pod stuck terminating past its grace period, a change
// made while a quota did not exist yet, a failed request whose charge was
// lost).
//
// Walkthrough: the controller reads pods, Services, PersistentVolumeClaims,
// ConfigMaps and ResourceQuotas from the shared typed informers. Any other
// kind a quota counts (secrets, replicationcontrollers, and every
// `count/<resource>.<group>` the server serves, found through discovery) is
// watched through a metadata informer started the first time a quota names
// it. An event on an object puts the keys of the quotas of its namespace
// that track its kind on a rate-limited work queue; so does a change of a
// quota's spec, and every quota is queued again each sync period
// (upstream's 5 minutes). A sync sums the usage of the objects that match
// the quota's scopes (Terminating, NotTerminating, BestEffort,
// NotBestEffort, PriorityClass, CrossNamespacePodAffinity) for each
// resource of spec.hard it can compute, keeps the previous value of a
// resource it cannot, and writes status only when hard or used changed.
package resourcequota
