package apiextensions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Schema is the structural schema of one version of a custom resource.
type Schema struct {
	rules     *celRules
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
	if s.rules == nil {
		return errs
	}
	for _, e := range errs {
		// As upstream: rules do not run on values of the wrong type.
		if e.Type == field.ErrorTypeTypeInvalid || e.Type == field.ErrorTypeNotSupported {
			return append(errs, field.Invalid(nil, nil, rulesNotChecked))
		}
	}
	return append(errs, s.rules.validate(obj, old)...)
}

// rulesNotChecked is upstream's word for rules left out of an object with
// type errors.
const rulesNotChecked = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// ValidateUpdate is Validate for an update, with upstream's validation
// ratcheting (on by default since Kubernetes 1.30): an error the old object
// had too, on a value the update did not change, is dropped, so an object
// stored before its schema tightened can still be changed elsewhere.
// Values under a list are unchanged only when the whole list is.
func (s *Schema) ValidateUpdate(obj, old map[string]any) field.ErrorList {
	errs := s.Validate(obj, old)
	if len(errs) == 0 {
		return nil
	}
	had := map[string]bool{}
	for _, e := range s.Validate(old, nil) {
		had[e.Error()] = true
	}
	// The old object's rules, even where its type errors kept them from
	// running: what they report is what an unchanged value may keep.
	for _, e := range s.rules.validate(old, nil) {
		had[e.Error()] = true
	}
	keep := func(e *field.Error) bool { return !had[e.Error()] || !unchangedAt(e.Field, obj, old) }
	var out field.ErrorList
	skipped := false
	for _, e := range errs {
		switch {
		case e.Field == "<nil>" && e.Detail == rulesNotChecked:
			skipped = true
		case keep(e):
			out = append(out, e)
		}
	}
	if !skipped {
		return out
	}
	for _, e := range out {
		if e.Type == field.ErrorTypeTypeInvalid || e.Type == field.ErrorTypeNotSupported {
			return append(out, field.Invalid(nil, nil, rulesNotChecked))
		}
	}
	// Every type error was ratcheted: the rules run after all.
	for _, e := range s.rules.validate(obj, old) {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// unchangedAt reports whether the value at a field path ("spec.ports[1].name",
// "spec.labels[app]") is the same in obj and old; a path through a list
// counts as unchanged only if the whole list is. A path it cannot follow is
// changed.
func unchangedAt(path string, obj, old map[string]any) bool {
	var cur, prev any = obj, old
	for _, step := range pathSteps(path) {
		if _, isList := cur.([]any); isList && !equality.Semantic.DeepEqual(cur, prev) {
			return false
		}
		var ok1, ok2 bool
		cur, ok1 = stepInto(cur, step)
		prev, ok2 = stepInto(prev, step)
		if !ok1 || !ok2 {
			return false
		}
	}
	return equality.Semantic.DeepEqual(cur, prev)
}

// pathSteps splits a field path into names and bracketed keys or indexes.
func pathSteps(path string) []string {
	var steps []string
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			steps = append(steps, name)
		}
		for rest != "" {
			var key string
			key, rest, _ = strings.Cut(rest, "]")
			steps = append(steps, "["+key)
			rest = strings.TrimPrefix(rest, "[")
		}
	}
	return steps
}

func stepInto(v any, step string) (any, bool) {
	switch val := v.(type) {
	case map[string]any:
		child, ok := val[strings.TrimPrefix(step, "[")]
		return child, ok
	case []any:
		if !strings.HasPrefix(step, "[") {
			return nil, false
		}
		i, err := strconv.Atoi(step[1:])
		if err != nil || i < 0 || i >= len(val) {
			return nil, false
		}
		return val[i], true
	}
	return nil, false
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
