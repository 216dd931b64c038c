package defaults

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// DefaultRoleBinding defaults roleRef.apiGroup and each subject's apiGroup.
func DefaultRoleBinding(rb *rbacv1.RoleBinding) {
	if rb.RoleRef.APIGroup == "" {
		rb.RoleRef.APIGroup = rbacv1.GroupName
	}
	for i := range rb.Subjects {
		defaultSubject(&rb.Subjects[i])
	}
}

// DefaultClusterRoleBinding defaults roleRef.apiGroup and each subject's
// apiGroup.
func DefaultClusterRoleBinding(crb *rbacv1.ClusterRoleBinding) {
	if crb.RoleRef.APIGroup == "" {
		crb.RoleRef.APIGroup = rbacv1.GroupName
	}
	for i := range crb.Subjects {
		defaultSubject(&crb.Subjects[i])
	}
}

// defaultSubject sets the API group users and groups live in; service
// accounts are in the core group, whose name is empty.
func defaultSubject(s *rbacv1.Subject) {
	if s.APIGroup != "" {
		return
	}
	switch s.Kind {
	case rbacv1.UserKind, rbacv1.GroupKind:
		s.APIGroup = rbacv1.GroupName
	case rbacv1.ServiceAccountKind:
		s.APIGroup = ""
	}
}
