package apiextensions

import (
	"errors"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// renamingConverter converts between v1 (spec.host) and v2 (spec.hostname),
// as a conversion webhook would; fail makes it fail.
type renamingConverter struct{ fail bool }

func (c renamingConverter) convert(objs []*unstructured.Unstructured, to schema.GroupVersion) error {
	if c.fail {
		return errors.New("the converter is down")
	}
	for _, o := range objs {
		if o.GetAPIVersion() == to.String() {
			continue
		}
		spec := o.Object["spec"].(map[string]any)
		from, into := "host", "hostname"
		if to.Version == "v1" {
			from, into = into, from
		}
		if v, ok := spec[from]; ok {
			spec[into] = v
			delete(spec, from)
		}
		o.SetAPIVersion(to.String())
	}
	return nil
}

func hostsVersion(t *testing.T, version, field, def string) versionFields {
	sch := mustSchema(t, `{"type": "object", "properties": {"spec": {"type": "object", "properties": {
		"`+field+`": {"type": "string"}, "zone": {"type": "string", "default": "`+def+`"}}}}}`)
	return versionFields{
		gv:  schema.GroupVersion{Group: "hosts.skiff.dev", Version: version},
		sch: sch,
		fields: selectableFields([]apiextensionsv1.SelectableField{
			{JSONPath: ".spec." + field}, {JSONPath: ".spec.zone"},
		}),
	}
}

// TestStoredFields: a stored object carries each version's selectable
// fields as a read at that version shows them (converted, with that
// version's defaults), under names of their own; the stored object is not
// changed; a version it cannot be converted to contributes none.
func TestStoredFields(t *testing.T) {
	v1, v2 := hostsVersion(t, "v1", "host", "a"), hostsVersion(t, "v2", "hostname", "b")
	stored := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hosts.skiff.dev/v1", "kind": "Host",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"host": "web.example"},
	}}
	before := stored.DeepCopy()

	failed := 0
	got := storedFields([]versionFields{v1, v2}, renamingConverter{}, func() { failed++ })(stored)
	want := fields.Set{
		"v1/spec.host": "web.example", "v1/spec.zone": "a",
		"v2/spec.hostname": "web.example", "v2/spec.zone": "b",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields: %v, want %v", got, want)
	}
	if !reflect.DeepEqual(stored, before) {
		t.Errorf("the stored object changed: %v", stored.Object)
	}
	if got := storedFields([]versionFields{v2}, renamingConverter{fail: true}, func() { failed++ })(stored); len(got) != 0 || failed != 1 {
		t.Errorf("fields through a failing conversion: %v, %d failures reported", got, failed)
	}
	// A list from etcd fails instead.
	if _, _, err := v2.storedAttrs(true, renamingConverter{fail: true})(stored); err == nil {
		t.Error("a list's attributes through a failing conversion: no error")
	}
	l, f, err := v2.storedAttrs(true, renamingConverter{})(stored)
	if err != nil || !reflect.DeepEqual(f, fields.Set{"metadata.name": "web", "metadata.namespace": "default",
		"v2/spec.hostname": "web.example", "v2/spec.zone": "b"}) || len(l) != 0 {
		t.Errorf("a list's attributes at v2: %v %v %v", l, f, err)
	}
	if storedFields(nil, renamingConverter{}, nil) != nil {
		t.Error("no selectable fields at any version should need no attributes")
	}
	labels := v2.fieldLabels()
	if !reflect.DeepEqual(labels, map[string]string{"spec.hostname": "v2/spec.hostname", "spec.zone": "v2/spec.zone"}) {
		t.Errorf("field labels of v2: %v", labels)
	}
}
