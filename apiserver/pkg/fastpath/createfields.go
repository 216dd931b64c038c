package fastpath

import (
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/registry"
)

// CreateFields records the managed fields of a create of a built-in kind
// through its main resource without structured-merge-diff's generic value
// layer: upstream's field manager compares the new object with the empty
// one by walking both Go values through SMD's reflection; this is one walk
// of the Go value, with plans made once per type from the same schema
// (createplan.go, createwalk.go). It finds what that comparison finds added
// or modified, and leaves to upstream's code anything it does not mirror
// exactly (TestCreateMatchesUpdateFuzzed, TestCreateMatchesUpdateEdgeCases).
type CreateFields struct {
	goType     reflect.Type
	root       *plan
	apiVersion string
	reset      fieldpath.Filter
}

// stripSet is what upstream's stripMetaManager takes out of every entry.
var stripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// NewCreateFields returns the CreateFields of r's objects written through
// the main resource, typed by tc, with the fields reset leaves out of every
// entry; nil when the kind's schema cannot be found.
func NewCreateFields(r *registry.Resource, tc managedfields.TypeConverter, reset map[fieldpath.APIVersion]fieldpath.Filter) *CreateFields {
	empty := r.New()
	empty.GetObjectKind().SetGroupVersionKind(r.GroupVersionKind())
	tv, err := tc.ObjectToTyped(empty)
	if err != nil {
		return nil
	}
	t := reflect.TypeOf(empty)
	gv := r.GroupVersion().String()
	return &CreateFields{
		goType:     t,
		root:       newPlanner(tv.Schema()).plan(t, tv.TypeRef()),
		apiVersion: gv,
		reset:      reset[fieldpath.APIVersion(gv)],
	}
}

// Record is upstream's UpdateNoErrors(empty, obj, manager) for a create:
// empty is the empty object of the kind, the live object of a create. It
// sets obj's managedFields to the one Update entry of manager and returns
// obj, true; or returns false, leaving obj untouched, when the write must
// take upstream's path (c is nil, obj has managedFields or is of another
// type, or holds anything the walk does not mirror exactly).
func (c *CreateFields) Record(empty, obj runtime.Object, manager string) (runtime.Object, bool) {
	if c == nil || reflect.TypeOf(obj) != c.goType || reflect.TypeOf(empty) != c.goType {
		return nil, false
	}
	acc, err := meta.Accessor(obj)
	if err != nil || len(acc.GetManagedFields()) != 0 {
		return nil, false
	}
	if live, err := meta.Accessor(empty); err != nil || len(live.GetManagedFields()) != 0 || live.GetUID() != "" {
		return nil, false
	}
	set, ok := c.fields(empty, obj)
	if !ok {
		return nil, false
	}
	if manager == "" {
		manager = "unknown"
	}
	acc.SetManagedFields(nil)
	if set.Empty() {
		return obj, true
	}
	raw, err := set.ToJSON()
	if err != nil {
		return nil, false
	}
	acc.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager:    manager,
		Operation:  metav1.ManagedFieldsOperationUpdate,
		APIVersion: c.apiVersion,
		Time:       &metav1.Time{Time: time.Now().UTC()},
		FieldsType: "FieldsV1",
		FieldsV1:   &metav1.FieldsV1{Raw: raw},
	}})
	return obj, true
}

// fields is what the creator owns: what Compare(empty, obj) finds added or
// modified, less the reset fields and the stripped metadata.
func (c *CreateFields) fields(empty, obj runtime.Object) (*fieldpath.Set, bool) {
	set := &fieldpath.Set{}
	if !newWalker(set).compare(c.root, reflect.ValueOf(empty), reflect.ValueOf(obj)) {
		return nil, false
	}
	if c.reset != nil {
		set = c.reset.Filter(set)
	}
	return set.Difference(stripSet), true
}
