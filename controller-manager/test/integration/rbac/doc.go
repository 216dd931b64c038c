// Package rbac runs skiff-controller-manager (the whole daemon, under its
// own identity) against a real skiff-apiserver and checks the
// clusterrole-aggregation controller: the bootstrap admin, edit and view
// ClusterRoles get the rules of the roles labelled for them, and a CRD's
// ClusterRole labelled aggregate-to-edit shows up in edit's rules and
// authorizes a user bound to edit.
package rbac
