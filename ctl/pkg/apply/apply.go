package apply

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
)

// Annotation is the annotation that holds the last-applied configuration.
const Annotation = corev1.LastAppliedConfigAnnotation

// FieldManager is the field manager kubectl uses for client-side apply.
const FieldManager = "kubectl-client-side-apply"

// ModifiedConfiguration returns the JSON kubectl stores as the last-applied
// configuration of obj: obj without the annotation. With annotate, it
// returns obj's JSON with the annotation set to that, as sent in a patch.
// obj is not changed.
func ModifiedConfiguration(obj *unstructured.Unstructured, annotate bool) ([]byte, error) {
	o := obj.DeepCopy()
	annots := o.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	delete(annots, Annotation)
	o.SetAnnotations(annots)
	modified, err := runtime.Encode(unstructured.UnstructuredJSONScheme, o)
	if err != nil {
		return nil, err
	}
	if !annotate {
		return modified, nil
	}
	annots[Annotation] = string(modified)
	o.SetAnnotations(annots)
	return runtime.Encode(unstructured.UnstructuredJSONScheme, o)
}

// WithAnnotation returns a copy of obj carrying its last-applied
// configuration, ready to be created.
func WithAnnotation(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	modified, err := ModifiedConfiguration(obj, false)
	if err != nil {
		return nil, err
	}
	o := obj.DeepCopy()
	annots := o.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[Annotation] = string(modified)
	o.SetAnnotations(annots)
	return o, nil
}

// Original returns the last-applied configuration stored on live, or nil.
func Original(live *unstructured.Unstructured) []byte {
	if v, ok := live.GetAnnotations()[Annotation]; ok {
		return []byte(v)
	}
	return nil
}

// Patch is a computed update.
type Patch struct {
	Type types.PatchType
	Data []byte
}

// Empty reports a patch that changes nothing.
func (p Patch) Empty() bool { return string(p.Data) == "{}" }

// ThreeWay computes the patch that takes live to desired: fields of the
// last-applied configuration missing from desired are removed.
func ThreeWay(desired, live *unstructured.Unstructured) (Patch, error) {
	modified, err := ModifiedConfiguration(desired, true)
	if err != nil {
		return Patch{}, fmt.Errorf("serializing the manifest: %w", err)
	}
	current, err := runtime.Encode(unstructured.UnstructuredJSONScheme, live)
	if err != nil {
		return Patch{}, fmt.Errorf("serializing the live object: %w", err)
	}
	original := Original(live)
	gvk := desired.GroupVersionKind()
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		if !runtime.IsNotRegisteredError(err) {
			return Patch{}, err
		}
		data, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current,
			mergepatch.RequireKeyUnchanged("apiVersion"), mergepatch.RequireKeyUnchanged("kind"),
			mergepatch.RequireMetadataKeyUnchanged("name"))
		if err != nil {
			return Patch{}, explainPreconditions(err)
		}
		return Patch{Type: types.MergePatchType, Data: data}, nil
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return Patch{}, err
	}
	data, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
	if err != nil {
		return Patch{}, explainPreconditions(err)
	}
	return Patch{Type: types.StrategicMergePatchType, Data: data}, nil
}

func explainPreconditions(err error) error {
	if mergepatch.IsPreconditionFailed(err) {
		return fmt.Errorf("apiVersion, kind and name cannot be changed by apply: %w", err)
	}
	return err
}
