// Package authz decides whether an authenticated user may make a request.
//
// Authorizers are chained as upstream's --authorization-mode (e.g.
// "Node,RBAC"): each answers Allow, Deny or NoOpinion, and the first answer
// other than NoOpinion wins; if none allows, the request is forbidden.
//
// RBAC evaluates Role, ClusterRole, RoleBinding and ClusterRoleBinding
// objects kept in memory from the API server's own watch caches, so a
// decision costs no etcd round trip. The bindings are indexed by the users,
// groups and service accounts they name, so a decision looks only at the
// bindings of the request's user and groups. The Node authorizer lets a kubelet
// (system:node:<name> in group system:nodes) read what its own pods need and
// write only its own Node, Lease and pod statuses.
package authz
