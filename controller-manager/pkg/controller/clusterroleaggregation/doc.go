// Package clusterroleaggregation is upstream's clusterrole-aggregation
// controller: a ClusterRole with an aggregationRule (admin, edit and view
// among the bootstrap roles) gets as its rules the union of the rules of
// every other ClusterRole its selectors match, in the selectors' order and
// then by name, each rule once. A CRD's author labels a ClusterRole
// rbac.authorization.k8s.io/aggregate-to-edit: "true" and edit grants it,
// and `kubectl get clusterrole edit -o yaml` shows it.
package clusterroleaggregation
