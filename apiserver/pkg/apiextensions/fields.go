package apiextensions

import (
	"fmt"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/registry/rest"
)

// maxSelectableFields is upstream's limit per version.
const maxSelectableFields = 8

// selectableFields returns the field selector attributes of a version's
// selectableFields: "spec.color" for ".spec.color", valued "" when absent.
func selectableFields(sfs []apiextensionsv1.SelectableField) rest.FieldsFunc {
	if len(sfs) == 0 {
		return nil
	}
	return func(obj runtime.Object) fields.Set {
		set := fields.Set{}
		u, _ := obj.(*unstructured.Unstructured)
		for _, sf := range sfs {
			key := strings.TrimPrefix(sf.JSONPath, ".")
			set[key] = ""
			if u == nil {
				continue
			}
			v, found, _ := unstructured.NestedFieldNoCopy(u.Object, strings.Split(key, ".")...)
			if !found {
				continue
			}
			switch x := v.(type) {
			case string:
				set[key] = x
			case bool:
				set[key] = strconv.FormatBool(x)
			case int64:
				set[key] = strconv.FormatInt(x, 10)
			}
		}
		return set
	}
}

// validateSelectableFields checks a version's selectableFields as
// upstream: at most 8, unique, simple paths outside metadata to a string,
// integer or boolean field of the schema.
func validateSelectableFields(v *apiextensionsv1.CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(v.SelectableFields) > maxSelectableFields {
		errs = append(errs, field.TooMany(p, len(v.SelectableFields), maxSelectableFields))
	}
	seen := map[string]bool{}
	for i, sf := range v.SelectableFields {
		jp := p.Index(i).Child("jsonPath")
		if sf.JSONPath == "" {
			errs = append(errs, field.Required(jp, ""))
			continue
		}
		if seen[sf.JSONPath] {
			errs = append(errs, field.Duplicate(jp, sf.JSONPath))
		}
		seen[sf.JSONPath] = true
		if err := selectablePath(v, sf.JSONPath); err != nil {
			errs = append(errs, field.Invalid(jp, sf.JSONPath, err.Error()))
		}
	}
	return errs
}

func selectablePath(v *apiextensionsv1.CustomResourceDefinitionVersion, path string) error {
	if !strings.HasPrefix(path, ".") || strings.ContainsAny(path, "[]*") {
		return fmt.Errorf("must be a simple json path starting with '.' and without array notation")
	}
	parts := strings.Split(strings.TrimPrefix(path, "."), ".")
	if parts[0] == "metadata" {
		return fmt.Errorf("is an invalid path: must not point to metadata")
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil // the missing schema is reported on its own
	}
	node := v.Schema.OpenAPIV3Schema
	for _, part := range parts {
		child, ok := node.Properties[part]
		if !ok {
			return fmt.Errorf("is an invalid path: does not refer to a valid field")
		}
		node = &child
	}
	switch node.Type {
	case "string", "integer", "boolean":
		return nil
	}
	return fmt.Errorf("must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed")
}
