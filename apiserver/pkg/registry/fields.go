package registry

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/registry/rest"
)

// attrFunc builds the storage AttrFunc for a resource.
func attrFunc(namespaced bool, extra rest.FieldsFunc) func(runtime.Object) (labels.Set, fields.Set, error) {
	return rest.AttrFunc(namespaced, extra)
}
