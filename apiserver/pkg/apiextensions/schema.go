package apiextensions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Schema is the structural schema of one version of a custom resource.
type Schema struct {
	rules     celRules
	props     *apiextensionsv1.JSONSchemaProps
	openapi   *spec.Schema
	validator *validate.SchemaValidator
}

// NewSchema compiles a version's openAPIV3Schema. props must have passed
// the CRD's validation (structural).
func NewSchema(props *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	if props == nil {
		return nil, fmt.Errorf("no schema")
	}
	data, err := json.Marshal(props)
	if err != nil {
		return nil, err
	}
	published, validated := &spec.Schema{}, &spec.Schema{}
	for _, s := range []*spec.Schema{published, validated} {
		if err := json.Unmarshal(data, s); err != nil {
			return nil, fmt.Errorf("converting the schema: %w", err)
		}
	}
	intOrString(validated)
	rules, errs := compileSchemaRules(props, nil)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &Schema{props: props, rules: rules, openapi: published, validator: validate.NewSchemaValidator(validated, nil, "", strfmt.Default)}, nil
}

// intOrString gives the fields marked x-kubernetes-int-or-string without a
// type the two types they accept, for validation (the published schema
// keeps the extension alone, as upstream's).
func intOrString(s *spec.Schema) {
	if len(s.Type) == 0 {
		if v, ok := s.Extensions.GetBool("x-kubernetes-int-or-string"); ok && v && len(s.AnyOf) == 0 {
			s.Type = spec.StringOrArray{"integer", "string"}
		}
	}
	for k, child := range s.Properties {
		intOrString(&child)
		s.Properties[k] = child
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		intOrString(s.AdditionalProperties.Schema)
	}
	if s.Items != nil && s.Items.Schema != nil {
		intOrString(s.Items.Schema)
	}
}

// OpenAPI is the schema as kube-openapi's type, for the published documents.
func (s *Schema) OpenAPI() *spec.Schema { return s.openapi }

// Validate checks obj (an unstructured object) against the schema and
// names every violation as upstream's API server does. old is the object
// before an update (nil on create), for transition rules.
func (s *Schema) Validate(obj, old map[string]any) field.ErrorList {
	errs := resultToFieldErrors(s.validator.Validate(obj))
	errs = append(errs, validateLists(obj, s.props, nil)...)
	if len(s.rules) == 0 {
		return errs
	}
	for _, e := range errs {
		// As upstream: rules do not run on values of the wrong type.
		if e.Type == field.ErrorTypeTypeInvalid || e.Type == field.ErrorTypeNotSupported {
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	return append(errs, s.rules.validate(obj, old, old != nil, s.props, "", nil)...)
}

// validateLists checks x-kubernetes-list-type: a set holds no value twice,
// a map no two items with the same keys.
func validateLists(v any, props *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch val := v.(type) {
	case map[string]any:
		for k, child := range val {
			if sub, ok := props.Properties[k]; ok {
				errs = append(errs, validateLists(child, &sub, p.Child(k))...)
			} else if props.AdditionalProperties != nil && props.AdditionalProperties.Schema != nil {
				errs = append(errs, validateLists(child, props.AdditionalProperties.Schema, p.Key(k))...)
			}
		}
	case []any:
		errs = append(errs, listDuplicates(val, props, p)...)
		if props.Items != nil && props.Items.Schema != nil {
			for i, item := range val {
				errs = append(errs, validateLists(item, props.Items.Schema, p.Index(i))...)
			}
		}
	}
	return errs
}

func listDuplicates(list []any, props *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	if props.XListType == nil || (*props.XListType != "set" && *props.XListType != "map") {
		return nil
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, item := range list {
		key := item
		if *props.XListType == "map" {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			keys := map[string]any{}
			for _, k := range props.XListMapKeys {
				keys[k] = m[k]
			}
			key = keys
		}
		b, _ := json.Marshal(key)
		if seen[string(b)] {
			errs = append(errs, field.Duplicate(p.Index(i), key))
		}
		seen[string(b)] = true
	}
	return errs
}

// resultToFieldErrors turns kube-openapi's result into field errors, as
// upstream's kubeOpenAPIResultToFieldErrors.
func resultToFieldErrors(result *validate.Result) field.ErrorList {
	var errs field.ErrorList
	for _, err := range result.Errors {
		verr, ok := err.(*openapierrors.Validation)
		if !ok {
			errs = append(errs, field.Invalid(nil, "", err.Error()))
			continue
		}
		var p *field.Path
		if name := strings.TrimPrefix(verr.Name, "."); name != "" && verr.Name != "." {
			p = field.NewPath(name)
		}
		value := verr.Value
		if value == nil {
			value = ""
		}
		switch verr.Code() {
		case openapierrors.RequiredFailCode:
			errs = append(errs, field.Required(p, ""))
		case openapierrors.EnumFailCode:
			values := make([]string, 0, len(verr.Values))
			for _, v := range verr.Values {
				if str, ok := v.(string); ok {
					values = append(values, str)
				} else {
					b, _ := json.Marshal(v)
					values = append(values, string(b))
				}
			}
			errs = append(errs, field.NotSupported(p, verr.Value, values))
		case openapierrors.TooLongFailCode:
			limit := -1
			if i, ok := verr.Valid.(int64); ok {
				limit = int(i)
			}
			errs = append(errs, field.TooLongMaxLength(p, value, limit))
		case openapierrors.MaxItemsFailCode:
			actual, limit := -1, -1
			if i, ok := verr.Value.(int64); ok {
				actual = int(i)
			}
			if i, ok := verr.Valid.(int64); ok {
				limit = int(i)
			}
			errs = append(errs, field.TooMany(p, actual, limit))
		case openapierrors.InvalidTypeCode:
			errs = append(errs, field.TypeInvalid(p, value, verr.Error()))
		default:
			errs = append(errs, field.Invalid(p, value, verr.Error()))
		}
	}
	return errs
}

// rootFields are kept at the root whatever the schema says.
var rootFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// Prune removes from obj the fields the schema does not specify, except
// under x-kubernetes-preserve-unknown-fields, and returns their paths
// ("spec.foo", "spec.items[0].bar"), sorted.
func (s *Schema) Prune(obj map[string]any) []string {
	var pruned []string
	for k, v := range obj {
		if rootFields[k] {
			continue
		}
		child, known := s.props.Properties[k]
		switch {
		case known:
			pruneValue(v, &child, k, &pruned)
		case s.props.XPreserveUnknownFields != nil && *s.props.XPreserveUnknownFields:
		default:
			delete(obj, k)
			pruned = append(pruned, k)
		}
	}
	sort.Strings(pruned)
	return pruned
}

func pruneValue(v any, props *apiextensionsv1.JSONSchemaProps, path string, pruned *[]string) {
	switch val := v.(type) {
	case map[string]any:
		pruneObject(val, props, path, pruned)
	case []any:
		if props.Items == nil || props.Items.Schema == nil {
			return
		}
		for i, item := range val {
			pruneValue(item, props.Items.Schema, fmt.Sprintf("%s[%d]", path, i), pruned)
		}
	}
}

func pruneObject(obj map[string]any, props *apiextensionsv1.JSONSchemaProps, path string, pruned *[]string) {
	preserve := props.XPreserveUnknownFields != nil && *props.XPreserveUnknownFields
	for k, v := range obj {
		childPath := path + "." + k
		if child, ok := props.Properties[k]; ok {
			pruneValue(v, &child, childPath, pruned)
			continue
		}
		if props.AdditionalProperties != nil {
			if props.AdditionalProperties.Schema != nil {
				pruneValue(v, props.AdditionalProperties.Schema, childPath, pruned)
			}
			continue
		}
		// An embedded resource keeps its apiVersion, kind and metadata.
		if preserve || (props.XEmbeddedResource && rootFields[k]) {
			continue
		}
		delete(obj, k)
		*pruned = append(*pruned, childPath)
	}
}

// Default sets the schema's defaults on the fields of obj that are missing
// (or null where the field is not nullable), as upstream's structural
// defaulting.
func (s *Schema) Default(obj map[string]any) {
	defaultObject(obj, s.props)
}

func defaultValue(v any, props *apiextensionsv1.JSONSchemaProps) {
	switch val := v.(type) {
	case map[string]any:
		defaultObject(val, props)
	case []any:
		if props.Items == nil || props.Items.Schema == nil {
			return
		}
		for i, item := range val {
			if item == nil && props.Items.Schema.Default != nil && !props.Items.Schema.Nullable {
				if d, ok := decodeDefault(props.Items.Schema.Default); ok {
					val[i] = d
				}
				continue
			}
			defaultValue(item, props.Items.Schema)
		}
	}
}

func defaultObject(obj map[string]any, props *apiextensionsv1.JSONSchemaProps) {
	for k, child := range props.Properties {
		cur, present := obj[k]
		if child.Default != nil && (!present || (cur == nil && !child.Nullable)) {
			if d, ok := decodeDefault(child.Default); ok {
				obj[k] = d
			}
		}
	}
	for k, v := range obj {
		if child, ok := props.Properties[k]; ok {
			defaultValue(v, &child)
		} else if props.AdditionalProperties != nil && props.AdditionalProperties.Schema != nil {
			defaultValue(v, props.AdditionalProperties.Schema)
		}
	}
}

// decodeDefault decodes a default as unstructured JSON (whole numbers as
// int64), a fresh value on each call.
func decodeDefault(j *apiextensionsv1.JSON) (any, bool) {
	var v any
	if err := utiljson.Unmarshal(j.Raw, &v); err != nil {
		return nil, false
	}
	return v, true
}
