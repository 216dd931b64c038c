package endpoints

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// maxJSONPatchOperations bounds a JSON patch, as upstream does.
const maxJSONPatchOperations = 10000

func (h *Handler) patchType(r *http.Request) (string, error) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", newUnsupportedMediaType(ct)
	}
	switch types.PatchType(mt) {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType:
		return mt, nil
	}
	return "", newUnsupportedMediaType(ct)
}

// applyPatch applies a patch of patchType to current and decodes the
// result into into (an empty object of gvk).
func (h *Handler) applyPatch(w http.ResponseWriter, r *http.Request, patchType string, patch []byte, current, into runtime.Object, gvk schema.GroupVersionKind) error {
	currentJSON, err := json.Marshal(current)
	if err != nil {
		return err
	}
	var patched []byte
	switch types.PatchType(patchType) {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		if len(p) > maxJSONPatchOperations {
			return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p)))
		}
		patched, err = p.Apply(currentJSON)
		if err != nil {
			return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(currentJSON, patch)
		if err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		var patchMap map[string]any
		if err := json.Unmarshal(patch, &patchMap); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		var currentMap map[string]any
		if err := json.Unmarshal(currentJSON, &currentMap); err != nil {
			return err
		}
		schemaObj := into.DeepCopyObject()
		result, err := strategicpatch.StrategicMergeMapPatch(currentMap, patchMap, schemaObj)
		if err != nil {
			return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		if patched, err = json.Marshal(result); err != nil {
			return err
		}
	default:
		return newUnsupportedMediaType(patchType)
	}
	directive, err := fieldValidation(r)
	if err != nil {
		return err
	}
	info, err := h.bodySerializer(runtime.ContentTypeJSON)
	if err != nil {
		return err
	}
	obj, err := h.decodeWith(w, info, directive, patched, gvk, into)
	if err != nil {
		return err
	}
	if obj != into {
		return fmt.Errorf("patched object decoded to a new value")
	}
	return nil
}

func (h *Handler) patch(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name, sub string, strategy rest.Strategy) {
	gr := s.R.GroupResource()
	pt, err := h.patchType(r)
	if err == nil && s.R.Custom != nil && pt == string(types.StrategicMergePatchType) {
		err = &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
		}}
	}
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	opts := &metav1.PatchOptions{}
	dry, data, ok := h.writePreamble(w, r, gr, name, opts)
	if !ok {
		return
	}
	if errs := metav1validation.ValidatePatchOptions(opts, types.PatchType(pt)); len(errs) > 0 {
		h.writeError(w, r, optionsInvalid("PatchOptions", errs), gr, name)
		return
	}
	if pt == string(types.ApplyYAMLPatchType) {
		h.apply(w, r, s, ns, name, sub, strategy, data, opts, dry)
		return
	}
	fn := func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		if !exists {
			return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, name)
		}
		out := s.R.New()
		if err := h.applyPatch(w, r, pt, data, current, out, s.R.GroupVersionKind()); err != nil {
			return nil, err
		}
		return h.trackFields(r, s, sub, current, out, opts.FieldManager), nil
	}
	out, _, err := s.Update(r.Context(), ns, name, fn, strategy, dry)
	h.respondUpdated(w, r, gr, name, out, false, err)
}

// apply serves a server-side apply; it creates a missing object (not a
// missing subresource's parent), answering 201 as upstream.
func (h *Handler) apply(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name, sub string, strategy rest.Strategy, data []byte, opts *metav1.PatchOptions, dry bool) {
	gr := s.R.GroupResource()
	fn, err := h.applyFunc(w, r, s, name, sub, data, opts)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	update := s.Apply
	if sub != "" {
		update = s.Update
	}
	out, created, err := update(r.Context(), ns, name, fn, strategy, dry)
	h.respondUpdated(w, r, gr, name, out, created, err)
}

func fieldErrors(path string, value any, msg string) field.ErrorList {
	parts := strings.Split(path, ".")
	return field.ErrorList{field.Invalid(field.NewPath(parts[0], parts[1:]...), value, msg)}
}
