package apiextensions

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
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

// versionFields is a served version that has selectable fields, as the
// selectors at it see objects: converted to it and defaulted.
type versionFields struct {
	gv     schema.GroupVersion
	sch    *Schema
	fields rest.FieldsFunc
}

// storedFieldKey names a version's selectable field among the attributes
// of stored objects ("v2/spec.host"): each version has its own, since a
// field may exist at one version only or hold other values there.
func storedFieldKey(version, field string) string { return version + "/" + field }

// fieldLabels maps the selectable fields of v to their names among the
// attributes of stored objects, for the selectors at v.
func (v versionFields) fieldLabels() map[string]string {
	out := map[string]string{}
	for k := range v.fields(&unstructured.Unstructured{}) {
		out[k] = storedFieldKey(v.gv.Version, k)
	}
	return out
}

// storedFieldsAt returns the selectable fields of a stored object at v,
// read from a copy converted to v (through the CRD's conversion) and
// defaulted with v's schema, as a read at v returns the object: upstream's
// store filters the objects it decoded to the requested version, so a
// selector selects what a read at its version shows, whatever version the
// object is stored at.
func (v versionFields) storedFieldsAt(u *unstructured.Unstructured, conv converter) (fields.Set, error) {
	c := u.DeepCopy()
	if err := readAs([]*unstructured.Unstructured{c}, v.gv, v.sch, conv); err != nil {
		return nil, err
	}
	set := fields.Set{}
	for k, val := range v.fields(c) {
		set[storedFieldKey(v.gv.Version, k)] = val
	}
	return set, nil
}

// storedFields returns the selectable fields of a stored object at every
// version of vs (storedFieldsAt), for the watch cache. A version the object
// cannot be converted to contributes none, and failed is called: the
// cache's attributes of the object are wrong until it is read again.
func storedFields(vs []versionFields, conv converter, failed func()) rest.FieldsFunc {
	if len(vs) == 0 {
		return nil
	}
	return func(obj runtime.Object) fields.Set {
		set := fields.Set{}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetName() == "" {
			return set
		}
		for _, v := range vs {
			at, err := v.storedFieldsAt(u, conv)
			if err != nil {
				klog.Background().Error(err, "converting a custom resource for its selectable fields",
					"namespace", u.GetNamespace(), "name", u.GetName(), "version", v.gv)
				failed()
				continue
			}
			maps.Copy(set, at)
		}
		return set
	}
}

// storedAttrs are the attributes a list read from etcd selects with at v:
// labels, metadata.name and metadata.namespace, and v's selectable fields
// of each stored object read at v. A failed conversion fails the list, as
// upstream's (a 500 naming the webhook).
func (v versionFields) storedAttrs(namespaced bool, conv converter) storage.AttrFunc {
	meta := rest.AttrFunc(namespaced, nil)
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		l, f, err := meta(obj)
		if err != nil {
			return nil, nil, err
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, nil, fmt.Errorf("expected a custom resource, got %T", obj)
		}
		at, err := v.storedFieldsAt(u, conv)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(f, at)
		return l, f, nil
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
