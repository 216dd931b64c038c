// Package replicationcontroller holds the ReplicationController kind's
// strategies, defaults, selectable fields and scale.
package replicationcontroller

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateReplicationController, validation.ValidateReplicationControllerUpdate)

// Strategy is the ReplicationController's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.WithGeneration, validated)
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a ReplicationController.
var Default = rest.Defaults(defaults.DefaultReplicationController)

// Scale serves replicationcontrollers/scale.
func Scale() *rest.ScaleAccessor {
	return rest.ScaleOf(func(rc *corev1.ReplicationController) rest.ScaleFields {
		return rest.ScaleFields{Meta: &rc.ObjectMeta, Replicas: &rc.Spec.Replicas, StatusReplicas: rc.Status.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}}
	})
}

// Fields are a ReplicationController's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return nil
	}
	return fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
}
