package apiextensions

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// servedVersions returns the served versions of a CRD, the preferred
// (highest priority, as upstream's discovery orders them) first.
func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []apiextensionsv1.CustomResourceDefinitionVersion {
	var out []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return version.CompareKubeAwareVersionStrings(out[i].Name, out[j].Name) > 0
	})
	return out
}

// customResource builds the table row of one served version of an
// Established CRD, with its accepted names. terminating reports whether the
// CRD is being deleted.
func customResource(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion, terminating func() bool) (*registry.Resource, *Schema, error) {
	if v.Schema == nil {
		return nil, nil, fmt.Errorf("version %s has no schema", v.Name)
	}
	sch, err := NewSchema(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return nil, nil, fmt.Errorf("version %s: %w", v.Name, err)
	}
	table, err := newTablePrinter(v.AdditionalPrinterColumns)
	if err != nil {
		return nil, nil, fmt.Errorf("version %s: %w", v.Name, err)
	}
	names := crd.Status.AcceptedNames
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: names.Kind}
	hasStatus := v.Subresources != nil && v.Subresources.Status != nil
	var scale *apiextensionsv1.CustomResourceSubresourceScale
	if v.Subresources != nil {
		scale = v.Subresources.Scale
	}
	main := customStrategy{schema: sch, namespaced: namespaced, hasStatus: hasStatus, scale: scale, kind: gk}
	r := &registry.Resource{
		Group: crd.Spec.Group, Version: v.Name, Kind: names.Kind, Resource: names.Plural,
		SingularName: names.Singular, ShortNames: names.ShortNames, Categories: names.Categories,
		Namespaced: namespaced, EtcdPrefix: crd.Spec.Group + "/" + names.Plural,
		New:      func() runtime.Object { return &unstructured.Unstructured{} },
		NewList:  func() runtime.Object { return &unstructured.UnstructuredList{} },
		Strategy: main,
		Fields:   selectableFields(v.SelectableFields),
		Default: func(obj runtime.Object) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				sch.Prune(u.Object)
				sch.Default(u.Object)
			}
		},
		Custom: &registry.Custom{
			ListKind: names.ListKind,
			Prune: func(obj runtime.Object) []string {
				if u, ok := obj.(*unstructured.Unstructured); ok {
					return sch.Prune(u.Object)
				}
				return nil
			},
			Table:       table.Table,
			Terminating: terminating,
			Schema:      sch.OpenAPI(),
		},
	}
	if hasStatus {
		status := main
		status.statusEndpoint = true
		r.StatusStrategy = status
	}
	if scale != nil {
		r.Scale = scaleAccessor(scale)
	}
	return r, sch, nil
}

// customStrategy creates and updates custom resources: metadata and schema
// validation, status kept apart when the status subresource is declared,
// and generation bumped on every change outside metadata (and status).
type customStrategy struct {
	schema         *Schema
	namespaced     bool
	hasStatus      bool
	statusEndpoint bool
	scale          *apiextensionsv1.CustomResourceSubresourceScale
	kind           schema.GroupKind
}

func (s customStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	if s.hasStatus {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
}

func (s customStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	if s.statusEndpoint {
		// Only the status changes; managedFields too, as upstream's: they
		// hold what this write's manager now owns.
		status, ok := u.Object["status"]
		managed := u.GetManagedFields()
		*u = *o.DeepCopy()
		u.SetManagedFields(managed)
		if ok {
			u.Object["status"] = status
		} else {
			delete(u.Object, "status")
		}
		return
	}
	if s.hasStatus {
		if status, ok := o.Object["status"]; ok {
			u.Object["status"] = runtime.DeepCopyJSONValue(status)
		} else {
			delete(u.Object, "status")
		}
	}
	if !equality.Semantic.DeepEqual(s.content(u), s.content(o)) {
		u.SetGeneration(o.GetGeneration() + 1)
	}
}

// content is what the generation tracks: all but metadata (and status when
// it has its own endpoint).
func (s customStrategy) content(u *unstructured.Unstructured) map[string]any {
	out := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k == "metadata" || (s.hasStatus && k == "status") {
			continue
		}
		out[k] = v
	}
	return out
}

func (s customStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	u := obj.(*unstructured.Unstructured)
	errs := apivalidation.ValidateObjectMetaAccessor(u, s.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, s.validateContent(u, nil)...)
}

func (s customStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validateContent(obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured).Object)
}

func (s customStrategy) validateContent(u *unstructured.Unstructured, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	if old == nil {
		errs = s.schema.Validate(u.Object, nil)
	} else {
		errs = s.schema.ValidateUpdate(u.Object, old)
	}
	if s.scale != nil {
		errs = append(errs, validateReplicas(u, s.scale.SpecReplicasPath)...)
		if s.hasStatus {
			errs = append(errs, validateReplicas(u, s.scale.StatusReplicasPath)...)
		}
	}
	return errs
}

func (s customStrategy) AllowCreateOnUpdate() bool      { return false }
func (s customStrategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields: with the status subresource, an apply through the main
// resource resets the status and one through status the spec.
func (s customStrategy) GetResetFields() []fieldpath.Path {
	switch {
	case s.statusEndpoint:
		return []fieldpath.Path{fieldpath.MakePathOrDie("spec")}
	case s.hasStatus:
		return []fieldpath.Path{fieldpath.MakePathOrDie("status")}
	}
	return nil
}

// Subresource names the endpoint for admission.
func (s customStrategy) Subresource() string {
	if s.statusEndpoint {
		return registry.SubStatus
	}
	return ""
}

// pathFields splits ".spec.replicas" into its fields.
func pathFields(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "."), ".")
}

// validateReplicas checks a replicas field named by the scale subresource,
// as upstream: a non-negative integer that fits in int32.
func validateReplicas(u *unstructured.Unstructured, path string) field.ErrorList {
	fields := pathFields(path)
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	if !found || v == nil {
		return nil
	}
	p := field.NewPath(fields[0], fields[1:]...)
	n, ok := v.(int64)
	switch {
	case !ok:
		return field.ErrorList{field.Invalid(p, v, "should be an integer")}
	case n < 0:
		return field.ErrorList{field.Invalid(p, n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return field.ErrorList{field.Invalid(p, n, fmt.Sprintf("should be less than or equal to %d", math.MaxInt32))}
	}
	return nil
}

// scaleAccessor reads and writes replicas at the paths the CRD declares.
func scaleAccessor(sc *apiextensionsv1.CustomResourceSubresourceScale) *rest.ScaleAccessor {
	return &rest.ScaleAccessor{
		ReplicasPath: pathFields(sc.SpecReplicasPath),
		Get: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil, fmt.Errorf("expected a custom resource, got %T", obj)
			}
			spec, _, _ := unstructured.NestedInt64(u.Object, pathFields(sc.SpecReplicasPath)...)
			status, _, _ := unstructured.NestedInt64(u.Object, pathFields(sc.StatusReplicasPath)...)
			selector := ""
			if sc.LabelSelectorPath != nil {
				selector, _, _ = unstructured.NestedString(u.Object, pathFields(*sc.LabelSelectorPath)...)
			}
			return &autoscalingv1.Scale{
				TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
				ObjectMeta: metav1.ObjectMeta{
					Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
					ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp(),
				},
				Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
				Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: selector},
			}, nil
		},
		Set: func(obj runtime.Object, replicas int32) error {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return fmt.Errorf("expected a custom resource, got %T", obj)
			}
			return unstructured.SetNestedField(u.Object, int64(replicas), pathFields(sc.SpecReplicasPath)...)
		},
	}
}

// readAs converts objs (read from storage, or copies of them) to gv in
// place and applies the version's defaults, as every read at gv does.
func readAs(objs []*unstructured.Unstructured, gv schema.GroupVersion, sch *Schema, conv converter) error {
	if err := conv.convert(objs, gv); err != nil {
		return err
	}
	for _, c := range objs {
		// Bookmarks carry no object to default.
		if c.GetName() != "" {
			sch.Default(c.Object)
		}
	}
	return nil
}

// versionView serves one version from the storage of the storage version:
// objects are converted both ways by the CRD's conversion (None rewrites
// apiVersion; a webhook converts), and the version's defaults are applied
// to what is read. Its field selectors select on the object as read at
// this version (v.fields, nil when it has no selectable fields): the
// storage's objects carry every version's selectable fields (storedFields)
// under names of their own, which the selectors are renamed to.
func versionView(v versionFields, storageGV schema.GroupVersion, listKind string, namespaced bool, conv converter) *rest.SharedStorage {
	gv := v.gv
	var fieldLabels map[string]string
	var storedAttrs storage.AttrFunc
	if v.fields != nil {
		fieldLabels = v.fieldLabels()
		storedAttrs = v.storedAttrs(namespaced, conv)
	}
	return &rest.SharedStorage{
		ToStored: func(obj runtime.Object) (runtime.Object, error) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil, fmt.Errorf("expected a custom resource, got %T", obj)
			}
			if err := conv.convert([]*unstructured.Unstructured{u}, storageGV); err != nil {
				return nil, err
			}
			return u, nil
		},
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil, fmt.Errorf("expected a custom resource, got %T", obj)
			}
			c := u.DeepCopy()
			if c.GetName() == "" {
				// A bookmark: nothing to convert.
				c.SetAPIVersion(gv.String())
				return c, nil
			}
			if err := readAs([]*unstructured.Unstructured{c}, gv, v.sch, conv); err != nil {
				return nil, err
			}
			return c, nil
		},
		NewStoredList: func() runtime.Object { return &unstructured.UnstructuredList{} },
		FieldLabels:   fieldLabels,
		StoredFields:  storedAttrs,
		ListFromStored: func(obj runtime.Object) (runtime.Object, error) {
			l, ok := obj.(*unstructured.UnstructuredList)
			if !ok {
				return nil, fmt.Errorf("expected a custom resource list, got %T", obj)
			}
			out := &unstructured.UnstructuredList{Object: runtime.DeepCopyJSON(l.Object)}
			out.SetAPIVersion(gv.String())
			out.SetKind(listKind)
			items := make([]*unstructured.Unstructured, len(l.Items))
			for i := range l.Items {
				items[i] = l.Items[i].DeepCopy()
			}
			// One conversion for the whole list, as upstream's.
			if err := readAs(items, gv, v.sch, conv); err != nil {
				return nil, err
			}
			out.Items = make([]unstructured.Unstructured, len(items))
			for i, it := range items {
				out.Items[i] = *it
			}
			return out, nil
		},
	}
}
