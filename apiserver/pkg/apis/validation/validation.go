package validation

import (
	"fmt"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCreate validates obj as upstream does when it is created. It
// returns nil for kinds it does not know.
func ValidateCreate(obj runtime.Object) field.ErrorList {
	if isNilObject(obj) {
		return nilObjectError(obj)
	}
	if errs, ok := validateCreateMore(obj); ok {
		return errs
	}
	if errs, ok := validatePolicyKinds(obj, nil); ok {
		return errs
	}
	if errs, ok := validateAPIRegistrationKinds(obj, nil); ok {
		return errs
	}
	if errs, ok := validateAutoscaling(obj, nil); ok {
		return errs
	}
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		return ValidateMutatingWebhookConfiguration(o)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		return ValidateValidatingWebhookConfiguration(o)
	case *corev1.Namespace:
		return ValidateNamespace(o)
	case *corev1.Pod:
		return ValidatePod(o)
	case *corev1.Node:
		return ValidateNode(o)
	case *corev1.Service:
		return ValidateService(o)
	case *corev1.Endpoints:
		return ValidateEndpoints(o)
	case *corev1.ConfigMap:
		return ValidateConfigMap(o)
	case *corev1.Secret:
		return ValidateSecret(o)
	case *corev1.Event:
		return ValidateEvent(o)
	case *corev1.ServiceAccount:
		return ValidateServiceAccount(o)
	case *appsv1.ReplicaSet:
		return ValidateReplicaSet(o)
	case *appsv1.Deployment:
		return ValidateDeployment(o)
	case *autoscalingv1.Scale:
		return ValidateScale(o)
	case *coordinationv1.Lease:
		return ValidateLease(o)
	case *discoveryv1.EndpointSlice:
		return ValidateEndpointSlice(o)
	case *rbacv1.Role:
		return ValidateRole(o)
	case *rbacv1.ClusterRole:
		return ValidateClusterRole(o)
	case *rbacv1.RoleBinding:
		return ValidateRoleBinding(o)
	case *rbacv1.ClusterRoleBinding:
		return ValidateClusterRoleBinding(o)
	}
	return nil
}

// ValidateUpdate validates obj as an update of old, as upstream does. Both
// must be of the same kind. It returns nil for kinds it does not know.
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	if isNilObject(obj) {
		return nilObjectError(obj)
	}
	if isNilObject(old) {
		return nilObjectError(old)
	}
	if errs, ok := validateUpdateMore(obj, old); ok {
		return errs
	}
	if errs, ok := validatePolicyKinds(obj, old); ok {
		return errs
	}
	if errs, ok := validateAPIRegistrationKinds(obj, old); ok {
		return errs
	}
	if errs, ok := validateAutoscaling(obj, old); ok {
		return errs
	}
	if !knownKind(obj) {
		return nil
	}
	if isNilObject(old) {
		return nilObjectError(old)
	}
	mismatch := field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("cannot validate an update of a %T to a %T", old, obj))}
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		if oldObj, ok := old.(*admissionregistrationv1.MutatingWebhookConfiguration); ok {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &oldObj.ObjectMeta, metadataPath), ValidateMutatingWebhookConfiguration(o)...)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		if oldObj, ok := old.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
			return append(validateObjectMetaUpdate(&o.ObjectMeta, &oldObj.ObjectMeta, metadataPath), ValidateValidatingWebhookConfiguration(o)...)
		}
	case *corev1.Namespace:
		if oldObj, ok := old.(*corev1.Namespace); ok {
			return ValidateNamespaceUpdate(o, oldObj)
		}
	case *corev1.Pod:
		if oldObj, ok := old.(*corev1.Pod); ok {
			return ValidatePodUpdate(o, oldObj)
		}
	case *corev1.Node:
		if oldObj, ok := old.(*corev1.Node); ok {
			return ValidateNodeUpdate(o, oldObj)
		}
	case *corev1.Service:
		if oldObj, ok := old.(*corev1.Service); ok {
			return ValidateServiceUpdate(o, oldObj)
		}
	case *corev1.Endpoints:
		if oldObj, ok := old.(*corev1.Endpoints); ok {
			return ValidateEndpointsUpdate(o, oldObj)
		}
	case *corev1.ConfigMap:
		if oldObj, ok := old.(*corev1.ConfigMap); ok {
			return ValidateConfigMapUpdate(o, oldObj)
		}
	case *corev1.Secret:
		if oldObj, ok := old.(*corev1.Secret); ok {
			return ValidateSecretUpdate(o, oldObj)
		}
	case *corev1.Event:
		if _, ok := old.(*corev1.Event); ok {
			return ValidateEvent(o)
		}
	case *corev1.ServiceAccount:
		if oldObj, ok := old.(*corev1.ServiceAccount); ok {
			return ValidateServiceAccountUpdate(o, oldObj)
		}
	case *appsv1.ReplicaSet:
		if oldObj, ok := old.(*appsv1.ReplicaSet); ok {
			return ValidateReplicaSetUpdate(o, oldObj)
		}
	case *appsv1.Deployment:
		if oldObj, ok := old.(*appsv1.Deployment); ok {
			return ValidateDeploymentUpdate(o, oldObj)
		}
	case *autoscalingv1.Scale:
		if _, ok := old.(*autoscalingv1.Scale); ok {
			return ValidateScale(o)
		}
	case *coordinationv1.Lease:
		if oldObj, ok := old.(*coordinationv1.Lease); ok {
			return ValidateLeaseUpdate(o, oldObj)
		}
	case *discoveryv1.EndpointSlice:
		if oldObj, ok := old.(*discoveryv1.EndpointSlice); ok {
			return ValidateEndpointSliceUpdate(o, oldObj)
		}
	case *rbacv1.Role:
		if oldObj, ok := old.(*rbacv1.Role); ok {
			return ValidateRoleUpdate(o, oldObj)
		}
	case *rbacv1.ClusterRole:
		if oldObj, ok := old.(*rbacv1.ClusterRole); ok {
			return ValidateClusterRoleUpdate(o, oldObj)
		}
	case *rbacv1.RoleBinding:
		if oldObj, ok := old.(*rbacv1.RoleBinding); ok {
			return ValidateRoleBindingUpdate(o, oldObj)
		}
	case *rbacv1.ClusterRoleBinding:
		if oldObj, ok := old.(*rbacv1.ClusterRoleBinding); ok {
			return ValidateClusterRoleBindingUpdate(o, oldObj)
		}
	}
	return mismatch
}

// knownKind reports whether obj is one of the kinds this package validates.
func knownKind(obj runtime.Object) bool {
	switch obj.(type) {
	case *corev1.Namespace, *corev1.Pod, *corev1.Node, *corev1.Service, *corev1.Endpoints,
		*corev1.ConfigMap, *corev1.Secret, *corev1.Event, *corev1.ServiceAccount,
		*appsv1.ReplicaSet, *appsv1.Deployment, *autoscalingv1.Scale, *coordinationv1.Lease,
		*discoveryv1.EndpointSlice, *rbacv1.Role, *rbacv1.ClusterRole, *rbacv1.RoleBinding,
		*rbacv1.ClusterRoleBinding, *admissionregistrationv1.MutatingWebhookConfiguration,
		*admissionregistrationv1.ValidatingWebhookConfiguration:
		return true
	}
	return false
}

// isNilObject reports whether obj is nil or a typed nil pointer of a known kind.
func isNilObject(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return true
	}
	switch o := obj.(type) {
	case nil:
		return true
	case *corev1.Namespace:
		return o == nil
	case *corev1.Pod:
		return o == nil
	case *corev1.Node:
		return o == nil
	case *corev1.Service:
		return o == nil
	case *corev1.Endpoints:
		return o == nil
	case *corev1.ConfigMap:
		return o == nil
	case *corev1.Secret:
		return o == nil
	case *corev1.Event:
		return o == nil
	case *corev1.ServiceAccount:
		return o == nil
	case *appsv1.ReplicaSet:
		return o == nil
	case *appsv1.Deployment:
		return o == nil
	case *autoscalingv1.Scale:
		return o == nil
	case *coordinationv1.Lease:
		return o == nil
	case *discoveryv1.EndpointSlice:
		return o == nil
	case *rbacv1.Role:
		return o == nil
	case *rbacv1.ClusterRole:
		return o == nil
	case *rbacv1.RoleBinding:
		return o == nil
	case *rbacv1.ClusterRoleBinding:
		return o == nil
	}
	return false
}

func errMismatch(old runtime.Object) error {
	return fmt.Errorf("cannot validate an update of a %T", old)
}

func nilObjectError(obj runtime.Object) field.ErrorList {
	return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("nil %T object", obj))}
}

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
