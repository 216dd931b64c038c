// Package policy runs skiff-controller-manager (the whole daemon, under its
// own identity and leader election) against a real skiff-apiserver and
// checks the resource quota and disruption controllers: ResourceQuota
// status.used follows the objects of its namespace, and a
// PodDisruptionBudget's status lets pods/eviction refuse or allow an
// eviction. There is no kubelet: the tests bind pods and report them Ready
// themselves.
package policy
