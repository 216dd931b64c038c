// Package replicaset holds the ReplicaSet kind's strategies, defaults,
// selectable fields and scale.
package replicaset

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateReplicaSet, validation.ValidateReplicaSetUpdate)

// Strategy is the ReplicaSet's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.WithGeneration, validated)
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a ReplicaSet.
var Default = rest.Defaults(defaults.DefaultReplicaSet)

// Scale serves replicasets/scale.
func Scale() *rest.ScaleAccessor {
	return rest.ScaleOf(func(rs *appsv1.ReplicaSet) rest.ScaleFields {
		return rest.ScaleFields{Meta: &rs.ObjectMeta, Replicas: &rs.Spec.Replicas, StatusReplicas: rs.Status.Replicas, Selector: rs.Spec.Selector}
	})
}

// Fields are a ReplicaSet's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return nil
	}
	return fields.Set{"status.replicas": strconv.Itoa(int(rs.Status.Replicas))}
}
