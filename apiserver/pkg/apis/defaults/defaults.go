package defaults

import (
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Default applies upstream's v1 defaults to obj in place. Objects of kinds
// skiff does not default (and typed nil pointers) are left untouched.
func Default(obj runtime.Object) {
	if obj == nil || isTypedNil(obj) {
		return
	}
	if defaultMore(obj) || defaultPolicyKinds(obj) || defaultAutoscaling(obj) {
		return
	}
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		if o != nil {
			DefaultMutatingWebhookConfiguration(o)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		if o != nil {
			DefaultValidatingWebhookConfiguration(o)
		}
	case *corev1.Namespace:
		if o != nil {
			DefaultNamespace(o)
		}
	case *corev1.NamespaceList:
		if o != nil {
			for i := range o.Items {
				DefaultNamespace(&o.Items[i])
			}
		}
	case *corev1.Pod:
		if o != nil {
			DefaultPod(o)
		}
	case *corev1.PodList:
		if o != nil {
			for i := range o.Items {
				DefaultPod(&o.Items[i])
			}
		}
	case *corev1.Node:
		if o != nil {
			DefaultNode(o)
		}
	case *corev1.Service:
		if o != nil {
			DefaultService(o)
		}
	case *corev1.Endpoints:
		if o != nil {
			DefaultEndpoints(o)
		}
	case *corev1.ConfigMap:
		if o != nil {
			DefaultConfigMap(o)
		}
	case *corev1.Secret:
		if o != nil {
			DefaultSecret(o)
		}
	case *corev1.Event, *corev1.ServiceAccount:
		// Upstream has no v1 defaults for these kinds.
	case *appsv1.ReplicaSet:
		if o != nil {
			DefaultReplicaSet(o)
		}
	case *appsv1.Deployment:
		if o != nil {
			DefaultDeployment(o)
		}
	case *autoscalingv1.Scale, *coordinationv1.Lease:
		// Upstream has no v1 defaults for these kinds.
	case *discoveryv1.EndpointSlice:
		if o != nil {
			DefaultEndpointSlice(o)
		}
	case *rbacv1.RoleBinding:
		if o != nil {
			DefaultRoleBinding(o)
		}
	case *rbacv1.ClusterRoleBinding:
		if o != nil {
			DefaultClusterRoleBinding(o)
		}
	case *rbacv1.Role, *rbacv1.ClusterRole:
		// Upstream has no v1 defaults for roles.
	}
}

func isTypedNil(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
