// Package secret holds the Secret kind's strategy, defaults and selectable
// fields.
package secret

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy: a Secret has no status.
var Strategy = rest.Whole(rest.Validation(validation.ValidateSecret, validation.ValidateSecretUpdate))

// Default applies upstream's v1 defaults to a Secret.
var Default = rest.Defaults(defaults.DefaultSecret)

// Fields are a Secret's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil
	}
	return fields.Set{"type": string(s.Type)}
}
