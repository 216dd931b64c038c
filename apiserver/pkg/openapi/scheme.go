package openapi

import (
	"fmt"
	"reflect"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"skiff.dev/apiserver/pkg/api"
)

// extensionGVK is the vendor extension that names the group-version-kinds of
// a definition (a list) or of an operation (one object).
const extensionGVK = "x-kubernetes-group-version-kind"

// schemeBuilders register the API groups whose Go types have OpenAPI
// definitions in package generated: the groups the API server serves
// (api.AddToSchemeFuncs) and the built-in metrics.k8s.io (package
// metricsserver, which has a scheme of its own). generate.sh must list the
// same packages; TestDefinitionsCoverScheme checks that it does.
func schemeBuilders() []func(*runtime.Scheme) error {
	return append(api.AddToSchemeFuncs(), metricsv1beta1.AddToScheme)
}

// registry knows the Go type behind every group-version-kind the definitions
// cover, and names definitions the way the upstream API server does.
type registry struct {
	scheme *runtime.Scheme
	// gvks maps a canonical Go type name ("k8s.io/api/core/v1.Pod") to the
	// kinds registered for it, sorted by group, version, kind.
	gvks map[string][]schema.GroupVersionKind
	// custom maps the kinds of custom resources to their type names.
	custom map[schema.GroupVersionKind]string
}

func newRegistry() (*registry, error) {
	s := runtime.NewScheme()
	for _, add := range schemeBuilders() {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("openapi: building scheme: %w", err)
		}
	}
	t := &registry{scheme: s, gvks: map[string][]schema.GroupVersionKind{}}
	for gvk, rt := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		name := canonicalName(rt)
		t.gvks[name] = append(t.gvks[name], gvk)
	}
	for _, list := range t.gvks {
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
	}
	return t, nil
}

// canonicalName is the OpenAPI canonical name of a Go type: its package path,
// a dot, and its name.
func canonicalName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() + "." + t.Name()
}

// addCustom registers the kinds of custom resources (those with a Schema)
// and their lists under their custom type names.
func (t *registry) addCustom(resources []Resource) {
	if t.custom == nil {
		t.custom = map[schema.GroupVersionKind]string{}
	}
	for _, r := range resources {
		if r.Schema == nil {
			continue
		}
		for _, gvk := range []schema.GroupVersionKind{r.gvk(), r.listGVK()} {
			name := customTypeName(gvk)
			t.custom[gvk] = name
			t.gvks[name] = []schema.GroupVersionKind{gvk}
		}
	}
}

// typeOf returns the canonical type name registered for gvk.
func (t *registry) typeOf(gvk schema.GroupVersionKind) (string, error) {
	if name, ok := t.custom[gvk]; ok {
		return name, nil
	}
	rt, ok := t.scheme.AllKnownTypes()[gvk]
	if !ok {
		return "", fmt.Errorf("openapi: no Go type known for %s (add its package to the scheme and to generate.sh)", gvk)
	}
	return canonicalName(rt), nil
}

// newObject returns a new zero value for gvk.
func (t *registry) newObject(gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := t.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return obj, nil
}

// definitionName turns a canonical Go type name into the REST-friendly
// definition name ("io.k8s.api.core.v1.Pod") and, for types registered as
// kinds, the x-kubernetes-group-version-kind extension listing them.
func (t *registry) definitionName(name string) (string, spec.Extensions) {
	friendly := util.ToRESTFriendlyName(name)
	list, ok := t.gvks[name]
	if !ok {
		return friendly, nil
	}
	ext := make([]interface{}, 0, len(list))
	for _, gvk := range list {
		ext = append(ext, map[string]interface{}{
			"group":   gvk.Group,
			"version": gvk.Version,
			"kind":    gvk.Kind,
		})
	}
	return friendly, spec.Extensions{extensionGVK: ext}
}

// Canonical names of the meta types that routes read and write.
var (
	statusType          = canonicalName(reflect.TypeOf(metav1.Status{}))
	watchEventType      = canonicalName(reflect.TypeOf(metav1.WatchEvent{}))
	patchType           = canonicalName(reflect.TypeOf(metav1.Patch{}))
	deleteOptionsType   = canonicalName(reflect.TypeOf(metav1.DeleteOptions{}))
	apiResourceListType = canonicalName(reflect.TypeOf(metav1.APIResourceList{}))
)
