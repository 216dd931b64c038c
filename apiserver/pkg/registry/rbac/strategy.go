// Package rbac holds the strategies and defaults of the RBAC kinds: Role,
// ClusterRole, RoleBinding and ClusterRoleBinding. None has a status.
package rbac

import (
	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// RoleStrategy is the Role's.
var RoleStrategy = rest.Whole(rest.Validation(validation.ValidateRole, validation.ValidateRoleUpdate))

// ClusterRoleStrategy is the ClusterRole's.
var ClusterRoleStrategy = rest.Whole(rest.Validation(validation.ValidateClusterRole, validation.ValidateClusterRoleUpdate))

// RoleBindingStrategy is the RoleBinding's.
var RoleBindingStrategy = rest.Whole(rest.Validation(validation.ValidateRoleBinding, validation.ValidateRoleBindingUpdate))

// DefaultRoleBinding applies upstream's v1 defaults to a RoleBinding.
var DefaultRoleBinding = rest.Defaults(defaults.DefaultRoleBinding)

// ClusterRoleBindingStrategy is the ClusterRoleBinding's.
var ClusterRoleBindingStrategy = rest.Whole(rest.Validation(validation.ValidateClusterRoleBinding, validation.ValidateClusterRoleBindingUpdate))

// DefaultClusterRoleBinding applies upstream's v1 defaults to a ClusterRoleBinding.
var DefaultClusterRoleBinding = rest.Defaults(defaults.DefaultClusterRoleBinding)
