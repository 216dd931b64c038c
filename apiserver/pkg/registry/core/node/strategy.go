// Package node holds the Node kind's strategies, defaults and selectable
// fields.
package node

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateNode, validation.ValidateNodeUpdate)

// Strategy is the Node's main endpoint: a kubelet registers its Node with
// its status. StatusStrategy is its status.
var (
	Strategy       = rest.Main(rest.WithStatusOnCreate, validated)
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a Node.
var Default = rest.Defaults(defaults.DefaultNode)

// Fields are a Node's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	return fields.Set{"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)}
}
