package validation

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NameValidatorFor returns the function upstream uses to validate the
// metadata.name (and generateName) of objects of the given kind, and false
// for kinds this package does not know.
func NameValidatorFor(gk schema.GroupKind) (apimachineryvalidation.ValidateNameFunc, bool) {
	switch gk {
	case schema.GroupKind{Kind: "Namespace"}:
		return apimachineryvalidation.ValidateNamespaceName, true
	case schema.GroupKind{Kind: "Service"}:
		return apimachineryvalidation.NameIsDNS1035Label, true
	case schema.GroupKind{Kind: "ServiceAccount"}:
		return apimachineryvalidation.ValidateServiceAccountName, true
	case schema.GroupKind{Kind: "Pod"}, schema.GroupKind{Kind: "Node"}, schema.GroupKind{Kind: "Endpoints"},
		schema.GroupKind{Kind: "ConfigMap"}, schema.GroupKind{Kind: "Secret"}, schema.GroupKind{Kind: "Event"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, schema.GroupKind{Group: "apps", Kind: "Deployment"},
		schema.GroupKind{Group: "autoscaling", Kind: "Scale"},
		schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"},
		schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:
		return apimachineryvalidation.NameIsDNSSubdomain, true
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}, schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"},
		schema.GroupKind{Group: rbacv1.GroupName, Kind: "RoleBinding"}, schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}:
		return rbacNameRequirements, true
	}
	return nil, false
}
