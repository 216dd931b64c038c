// Package statefulset holds the StatefulSet kind's strategies, defaults and
// scale.
package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateStatefulSet, validation.ValidateStatefulSetUpdate)

// Strategy is the StatefulSet's main endpoint; StatusStrategy its status.
var (
	Strategy       = rest.Main(rest.WithGeneration, validated)
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a StatefulSet.
var Default = rest.Defaults(defaults.DefaultStatefulSet)

// Scale serves statefulsets/scale.
func Scale() *rest.ScaleAccessor {
	return rest.ScaleOf(func(s *appsv1.StatefulSet) rest.ScaleFields {
		return rest.ScaleFields{Meta: &s.ObjectMeta, Replicas: &s.Spec.Replicas, StatusReplicas: s.Status.Replicas, Selector: s.Spec.Selector}
	})
}
