package endpoints

import (
	"context"
	"fmt"
	"math"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"skiff.dev/apiserver/pkg/fieldmanager"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// fieldManager returns the field manager of s for writes to sub.
func (h *Handler) fieldManager(s *registry.Store, sub string) (*fieldmanager.Manager, error) {
	versions := func() []*registry.Resource {
		var out []*registry.Resource
		for _, r := range h.CustomResources() {
			if r.Group == s.R.Group && r.Kind == s.R.Kind {
				out = append(out, r)
			}
		}
		return out
	}
	return h.fields.For(s, sub, versions)
}

// trackFields records in obj's managedFields what the request's field
// manager (or, without one, its user agent) wrote over live, as upstream
// does on every create, update and patch. When the manager cannot be built
// the write goes on with the managed fields it had: ownership is
// bookkeeping, not a reason to refuse a write.
func (h *Handler) trackFields(r *http.Request, s *registry.Store, sub string, live, obj runtime.Object, fieldManager string) runtime.Object {
	fm, err := h.fieldManager(s, sub)
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Tracking managed fields", "resource", s.R.GroupResource())
		return obj
	}
	return fm.UpdateNoErrors(withKind(s, live), withKind(s, obj), fieldmanager.ManagerName(fieldManager, r.UserAgent()))
}

// trackCreate is trackFields for a create through the main resource: the
// live object is the empty object of s's kind, and the field manager
// records the creator's fields by its own walk of a built-in kind's
// object (Manager.Create), with the same outcome as UpdateNoErrors.
func (h *Handler) trackCreate(r *http.Request, s *registry.Store, obj runtime.Object, fieldManager string) runtime.Object {
	fm, err := h.fieldManager(s, "")
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Tracking managed fields", "resource", s.R.GroupResource())
		return obj
	}
	return fm.Create(newObject(s), withKind(s, obj), fieldmanager.ManagerName(fieldManager, r.UserAgent()))
}

// newObject is an empty object of s's kind, as the live object of a create.
func newObject(s *registry.Store) runtime.Object {
	return withKind(s, s.R.New())
}

// withKind sets the kind on a custom resource that lacks it (an empty
// one); the field manager finds an object's type by its kind. Typed
// objects are found by their Go type and are returned as they are.
func withKind(s *registry.Store, obj runtime.Object) runtime.Object {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !u.GroupVersionKind().Empty() {
		return obj
	}
	u = u.DeepCopy()
	u.SetGroupVersionKind(s.R.GroupVersionKind())
	return u
}

// applyFunc returns the update of a server-side apply: the patch (the
// fields the manager wants to own, with their values) merged into the live
// object, or into an empty one when there is none, by the field manager,
// which records the manager as the owner of what it applied and answers
// 409 when another manager owns a field the patch changes, unless force.
func (h *Handler) applyFunc(w http.ResponseWriter, r *http.Request, s *registry.Store, name, sub string, data []byte, opts *metav1.PatchOptions) (rest.UpdateFunc, error) {
	directive, err := fieldValidation(r)
	if err != nil {
		return nil, err
	}
	patch, err := decodeApplyPatch(data, directive)
	if err != nil {
		return nil, err
	}
	if directive == metav1.FieldValidationWarn {
		if err := strictYAML(data); err != nil {
			addWarning(w, err.Error())
		}
	}
	if gvk := patch.GroupVersionKind(); gvk != s.R.GroupVersionKind() {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid object type: %v", gvk))
	}
	fm, err := h.fieldManager(s, sub)
	if err != nil {
		return nil, err
	}
	if err := fm.CheckApply(patch); err != nil {
		return nil, err
	}
	force := opts.Force != nil && *opts.Force
	return func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		live := current
		if !exists {
			if sub != "" {
				return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, name)
			}
			live = newObject(s)
		}
		return fm.Apply(withKind(s, live), patch.DeepCopy(), opts.FieldManager, force)
	}, nil
}

// decodeApplyPatch decodes an apply patch: YAML (or JSON) of one object.
// With fieldValidation=Strict a duplicate field is an error, as upstream's.
func decodeApplyPatch(data []byte, directive string) (*unstructured.Unstructured, error) {
	// Through JSON with apimachinery's decoder, so that integers are int64
	// as in every other decoded object (a custom resource's integer fields
	// are checked as such).
	patch := &unstructured.Unstructured{}
	j, err := yaml.YAMLToJSON(data)
	if err == nil {
		err = utiljson.Unmarshal(j, &patch.Object)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if patch.Object == nil {
		return nil, apierrors.NewBadRequest("error decoding YAML: the apply patch is empty: it must be an object with apiVersion, kind and metadata.name")
	}
	if directive == metav1.FieldValidationStrict {
		if err := strictYAML(data); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	return patch, nil
}

func strictYAML(data []byte) error {
	if err := yaml.UnmarshalStrict(data, &map[string]any{}); err != nil {
		return fmt.Errorf("error strict decoding YAML: %v", err)
	}
	return nil
}

// optionsInvalid is upstream's 422 for invalid request options
// (fieldManager, force), on the options' kind.
func optionsInvalid(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// applyScale serves a server-side apply of the scale subresource: the
// Scale's spec.replicas is applied to the parent's replicas field by the
// parent's field manager for subresource "scale", so the applier owns the
// replicas there and conflicts with their other owners as upstream's.
func (h *Handler) applyScale(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string, respond func(runtime.Object, error)) {
	opts := &metav1.PatchOptions{}
	dry, data, ok := h.writePreamble(w, r, s.R.GroupResource(), name, opts)
	if !ok {
		return
	}
	respond(h.applyScaleBody(r, s, ns, name, data, opts, dry))
}

func (h *Handler) applyScaleBody(r *http.Request, s *registry.Store, ns, name string, data []byte, opts *metav1.PatchOptions, dry bool) (runtime.Object, error) {
	if errs := metav1validation.ValidatePatchOptions(opts, types.ApplyPatchType); len(errs) > 0 {
		return nil, optionsInvalid("PatchOptions", errs)
	}
	directive, err := fieldValidation(r)
	if err != nil {
		return nil, err
	}
	scale, err := decodeApplyPatch(data, directive)
	if err != nil {
		return nil, err
	}
	if gvk := scale.GroupVersionKind(); gvk != autoscalingv1.SchemeGroupVersion.WithKind("Scale") {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid object type: %v", gvk))
	}
	if scale.GetManagedFields() != nil {
		return nil, apierrors.NewBadRequest("metadata.managedFields must be nil")
	}
	if scale.GetName() != "" && scale.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", scale.GetName(), name))
	}
	parent := &unstructured.Unstructured{Object: map[string]any{}}
	parent.SetGroupVersionKind(s.R.GroupVersionKind())
	parent.SetName(name)
	if s.R.Namespaced {
		parent.SetNamespace(ns)
	}
	parent.SetResourceVersion(scale.GetResourceVersion())
	if v, found, _ := unstructured.NestedFieldNoCopy(scale.Object, "spec", "replicas"); found {
		n, isInt := v.(int64)
		scaleKind := autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind()
		switch {
		case !isInt || n < 0:
			return nil, apierrors.NewInvalid(scaleKind, name, fieldErrors("spec.replicas", v, "must be greater than or equal to 0"))
		case n > math.MaxInt32:
			return nil, apierrors.NewInvalid(scaleKind, name, fieldErrors("spec.replicas", v, fmt.Sprintf("must be less than or equal to %d", math.MaxInt32)))
		}
		if err := unstructured.SetNestedField(parent.Object, n, s.R.Scale.SpecReplicasPath()...); err != nil {
			return nil, err
		}
	}
	fm, err := h.fieldManager(s, registry.SubScale)
	if err != nil {
		return nil, err
	}
	if err := fm.CheckApply(parent); err != nil {
		return nil, err
	}
	force := opts.Force != nil && *opts.Force
	fn := func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		if !exists {
			return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, name)
		}
		return fm.Apply(withKind(s, current), parent.DeepCopy(), opts.FieldManager, force)
	}
	out, _, err := s.Update(r.Context(), ns, name, fn, s.R.Strategy, dry)
	return out, err
}
