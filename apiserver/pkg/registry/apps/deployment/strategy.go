// Package deployment holds the Deployment kind's strategies, defaults and
// scale.
package deployment

import (
	appsv1 "k8s.io/api/apps/v1"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateDeployment, validation.ValidateDeploymentUpdate)

// Strategy is the Deployment's main endpoint; StatusStrategy its status,
// which keeps the Deployment's labels (the controller writes its revision
// annotation with the status).
var (
	Strategy       = rest.Main(rest.WithGeneration, validated)
	StatusStrategy = rest.Status(validated,
		rest.KeepOnStatus(func(d, old *appsv1.Deployment) { d.Labels = old.Labels }))
)

// Default applies upstream's v1 defaults to a Deployment.
var Default = rest.Defaults(defaults.DefaultDeployment)

// Scale serves deployments/scale.
func Scale() *rest.ScaleAccessor {
	return rest.ScaleOf(func(d *appsv1.Deployment) rest.ScaleFields {
		return rest.ScaleFields{Meta: &d.ObjectMeta, Replicas: &d.Spec.Replicas, StatusReplicas: d.Status.Replicas, Selector: d.Spec.Selector}
	})
}
