package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/runtime/schema"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"skiff.dev/apiserver/pkg/openapi/generated"
)

// Canonical names of the meta types a custom resource's definitions refer to.
const (
	objectMetaType = "k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta"
	listMetaType   = "k8s.io/apimachinery/pkg/apis/meta/v1.ListMeta"
)

// definitions are the generated definitions of the built-in types, with
// those of apiextensions.k8s.io (CustomResourceDefinition) and
// apiregistration.k8s.io (APIService) from upstream's generated packages.
func definitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	out := generated.GetOpenAPIDefinitions(ref)
	for name, def := range apiextensionsopenapi.GetOpenAPIDefinitions(ref) {
		if _, ok := out[name]; !ok {
			out[name] = def
		}
	}
	for name, def := range aggregatoropenapi.GetOpenAPIDefinitions(ref) {
		if _, ok := out[name]; !ok {
			out[name] = def
		}
	}
	return out
}

// customTypeName is the canonical name given to a custom resource's kind:
// "<group>/<version>.<Kind>", which the REST-friendly naming turns into
// upstream's definition name ("com.example.stable.v1.CronTab").
func customTypeName(gvk schema.GroupVersionKind) string {
	return gvk.Group + "/" + gvk.Version + "." + gvk.Kind
}

// customDefinitions builds the definitions of the custom resources in
// resources (those with a Schema): the object and its list.
func customDefinitions(resources []Resource) func(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		out := definitions(ref)
		for _, r := range resources {
			if r.Schema == nil {
				continue
			}
			obj := customObjectSchema(r, ref)
			out[customTypeName(r.gvk())] = common.OpenAPIDefinition{Schema: obj, Dependencies: []string{objectMetaType}}
			out[customTypeName(r.listGVK())] = common.OpenAPIDefinition{
				Schema:       customListSchema(r, ref),
				Dependencies: []string{listMetaType, customTypeName(r.gvk())},
			}
		}
		return out
	}
}

func stringProperty(description string) spec.Schema {
	s := *spec.StringProperty()
	s.Description = description
	return s
}

const (
	apiVersionDescription = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDescription       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// customObjectSchema is the CRD's schema with apiVersion, kind and metadata
// described as upstream publishes them.
func customObjectSchema(r Resource, ref common.ReferenceCallback) spec.Schema {
	s := *r.Schema
	props := make(map[string]spec.Schema, len(s.Properties)+3)
	for k, v := range s.Properties {
		props[k] = v
	}
	props["apiVersion"] = stringProperty(apiVersionDescription)
	props["kind"] = stringProperty(kindDescription)
	props["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{
		Description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		Ref:         ref(objectMetaType),
	}}
	s.Properties = props
	if len(s.Type) == 0 {
		s.Type = spec.StringOrArray{"object"}
	}
	return s
}

func customListSchema(r Resource, ref common.ReferenceCallback) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{
		Description: r.listGVK().Kind + " is a list of " + r.Kind,
		Type:        spec.StringOrArray{"object"},
		Required:    []string{"items"},
		Properties: map[string]spec.Schema{
			"apiVersion": stringProperty(apiVersionDescription),
			"kind":       stringProperty(kindDescription),
			"metadata": {SchemaProps: spec.SchemaProps{
				Description: "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
				Ref:         ref(listMetaType),
			}},
			"items": {SchemaProps: spec.SchemaProps{
				Description: "List of " + r.Resource,
				Type:        spec.StringOrArray{"array"},
				Items:       &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(customTypeName(r.gvk()))}}},
			}},
		},
	}}
}

const extensionPreserveUnknownFields = "x-kubernetes-preserve-unknown-fields"

// customV2 rewrites the definitions of the custom resources in a Swagger
// 2.0 document as upstream's CRD builder does for v2, where kubectl reads
// a schema as closed: a kind whose schema preserves unknown fields at the
// root is published as a bare object (no properties at all, so any field
// passes); below the root, a node that preserves unknown fields loses its
// properties and items, a nullable one its type as well, an array left
// without items its type, and a nullable property is no longer required.
func customV2(defs spec.Definitions, resources []Resource) error {
	for _, r := range resources {
		if r.Schema == nil {
			continue
		}
		name := util.ToRESTFriendlyName(customTypeName(r.gvk()))
		def, ok := defs[name]
		if !ok {
			continue
		}
		if preservesUnknownFields(r.Schema) {
			bare := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
			if gvk, ok := def.Extensions[extensionGVK]; ok {
				bare.Extensions = spec.Extensions{extensionGVK: gvk}
			}
			defs[name] = bare
			continue
		}
		// A copy: the definition shares its nested schemas with the v3
		// documents'.
		data, err := json.Marshal(def)
		if err != nil {
			return fmt.Errorf("openapi: %s: %w", name, err)
		}
		var c spec.Schema
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("openapi: %s: %w", name, err)
		}
		structuralV2(&c)
		defs[name] = c
	}
	return nil
}

func preservesUnknownFields(s *spec.Schema) bool {
	v, _ := s.Extensions.GetBool(extensionPreserveUnknownFields)
	return v
}

func structuralV2(s *spec.Schema) {
	if s.Nullable {
		s.Type, s.Nullable, s.Items, s.Properties = nil, false, nil, nil
	}
	if preservesUnknownFields(s) {
		s.Items, s.Properties = nil, nil
	}
	if s.Items == nil && s.Type.Contains("array") {
		s.Type = nil
	}
	for name, p := range s.Properties {
		if p.Nullable {
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
		}
		structuralV2(&p)
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		structuralV2(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		structuralV2(s.AdditionalProperties.Schema)
	}
}

// toSwagger2 drops from a definition what Swagger 2.0 cannot express
// (nullable, anyOf, oneOf, not), as upstream publishes custom resources
// in its v2 document.
func toSwagger2(defs spec.Definitions) spec.Definitions {
	w := &schemamutation.Walker{
		SchemaCallback: func(s *spec.Schema) *spec.Schema {
			if !s.Nullable && s.AnyOf == nil && s.OneOf == nil && s.Not == nil {
				return s
			}
			c := *s
			c.Nullable = false
			c.AnyOf, c.OneOf, c.Not = nil, nil, nil
			return &c
		},
		RefCallback: schemamutation.RefCallbackNoop,
	}
	out := make(spec.Definitions, len(defs))
	for name, def := range defs {
		out[name] = *w.WalkSchema(&def)
	}
	return out
}

// Dynamic serves the current Spec; the API server replaces it when the
// set of custom resources changes. The base Spec (the built-in kinds) is
// built on first use, not when the server starts: most clients never ask
// for OpenAPI, and building it costs a noticeable share of a start-up.
// It is safe for concurrent use.
type Dynamic struct {
	cur atomic.Pointer[Spec]

	buildBase func() (*Spec, error)
	once      sync.Once
	base      *Spec
	baseErr   error
}

// NewDynamic serves the Spec that build returns, built once on first use,
// until Set replaces it.
func NewDynamic(build func() (*Spec, error)) *Dynamic {
	return &Dynamic{buildBase: build}
}

// Base returns the base Spec, building it the first time.
func (d *Dynamic) Base() (*Spec, error) {
	d.once.Do(func() { d.base, d.baseErr = d.buildBase() })
	return d.base, d.baseErr
}

// Set replaces the served Spec; nil serves the base Spec again.
func (d *Dynamic) Set(s *Spec) { d.cur.Store(s) }

// Current returns the served Spec.
func (d *Dynamic) Current() (*Spec, error) {
	if s := d.cur.Load(); s != nil {
		return s, nil
	}
	return d.Base()
}

func (d *Dynamic) serve(w http.ResponseWriter, f func(*Spec)) {
	s, err := d.Current()
	if err != nil {
		http.Error(w, "building the OpenAPI documents: "+err.Error(), http.StatusInternalServerError)
		return
	}
	f(s)
}

// ServeV2 serves /openapi/v2 from the current Spec.
func (d *Dynamic) ServeV2(w http.ResponseWriter, r *http.Request) {
	d.serve(w, func(s *Spec) { s.ServeV2(w, r) })
}

// ServeV3Discovery serves /openapi/v3 from the current Spec.
func (d *Dynamic) ServeV3Discovery(w http.ResponseWriter, r *http.Request) {
	d.serve(w, func(s *Spec) { s.ServeV3Discovery(w, r) })
}

// ServeV3GroupVersion serves /openapi/v3/<gvPath> from the current Spec.
func (d *Dynamic) ServeV3GroupVersion(w http.ResponseWriter, r *http.Request, gvPath string) {
	d.serve(w, func(s *Spec) { s.ServeV3GroupVersion(w, r, gvPath) })
}
