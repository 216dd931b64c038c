package registry

import (
	"context"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
)

// Strategy holds what differs between kinds on create and update.
type Strategy interface {
	// PrepareForCreate clears or sets fields the client may not set.
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	// PrepareForUpdate keeps what this endpoint may not change from old.
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// AllowCreateOnUpdate lets PUT create a missing object.
	AllowCreateOnUpdate() bool
	// AllowUnconditionalUpdate lets PUT without resourceVersion overwrite.
	AllowUnconditionalUpdate() bool
}

// specStatus describes how a kind splits spec and status.
type specStatus int

const (
	// noStatus: the whole object is written by the main endpoint.
	noStatus specStatus = iota
	// mainEndpoint: status is kept from the old object.
	mainEndpoint
	// statusEndpoint: only status (and nothing else) changes.
	statusEndpoint
)

// genericStrategy covers most kinds: defaults, validation from the
// validation package, spec/status split by reflection, and generation bumped
// when the spec changes for kinds that track it.
type genericStrategy struct {
	split           specStatus
	trackGeneration bool
	// labelsInGeneration: a change of labels bumps the generation too
	// (upstream's EndpointSlice strategy).
	labelsInGeneration bool
	// statusOnCreate keeps the status a client creates the object with
	// (upstream lets a kubelet register its Node with its status).
	statusOnCreate   bool
	createOnUpdate   bool
	unconditional    bool
	prepareForCreate func(obj runtime.Object)
}

var _ Strategy = genericStrategy{}

func (s genericStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if s.split != noStatus && !s.statusOnCreate {
		resetField(obj, "Status")
	}
	if s.trackGeneration {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetGeneration(1)
		}
	}
	if s.prepareForCreate != nil {
		s.prepareForCreate(obj)
	}
}

func (s genericStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	switch s.split {
	case noStatus:
		// A kind without status bumps its generation when anything but
		// its metadata changed, as upstream's strategies of these kinds
		// (their spec, a webhook configuration's webhooks, a slice's
		// endpoints and ports).
		if !s.trackGeneration {
			return
		}
		m, err1 := meta.Accessor(obj)
		om, err2 := meta.Accessor(old)
		if err1 != nil || err2 != nil {
			return
		}
		if !nonMetaEqual(obj, old) || (s.labelsInGeneration && !equality.Semantic.DeepEqual(m.GetLabels(), om.GetLabels())) {
			m.SetGeneration(om.GetGeneration() + 1)
		}
	case mainEndpoint:
		copyField(obj, old, "Status")
		if s.trackGeneration && !equality.Semantic.DeepEqual(field0(obj, "Spec"), field0(old, "Spec")) {
			if m, err := meta.Accessor(obj); err == nil {
				m.SetGeneration(m.GetGeneration() + 1)
			}
		}
	case statusEndpoint:
		// As upstream's status strategies: the spec is kept; metadata may
		// change (a Deployment controller writes its revision annotation
		// with the status), except a Deployment's labels and a pod's
		// owners (old kubelets corrupted them).
		copyField(obj, old, "Spec")
		m, err1 := meta.Accessor(obj)
		om, err2 := meta.Accessor(old)
		if err1 != nil || err2 != nil {
			return
		}
		switch obj.(type) {
		case *appsv1.Deployment:
			m.SetLabels(om.GetLabels())
		case *corev1.Pod:
			m.SetOwnerReferences(om.GetOwnerReferences())
		}
	}
}

func (s genericStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateCreate(obj)
}

func (s genericStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	if s.split == statusEndpoint {
		switch o := obj.(type) {
		case *corev1.Pod:
			return validation.ValidatePodStatusUpdate(o, old.(*corev1.Pod))
		case *corev1.Namespace:
			return validation.ValidateNamespaceStatusUpdate(o, old.(*corev1.Namespace))
		}
	}
	return validation.ValidateUpdate(obj, old)
}

// subresource names the endpoint the strategy serves.
func (s genericStrategy) subresource() string {
	if s.split == statusEndpoint {
		return SubStatus
	}
	return ""
}

func (s genericStrategy) AllowCreateOnUpdate() bool      { return s.createOnUpdate }
func (s genericStrategy) AllowUnconditionalUpdate() bool { return s.unconditional }

// Default applies upstream's defaults to obj.
func Default(obj runtime.Object) { defaults.Default(obj) }

func structValue(obj runtime.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Ptr || v.IsNil() {
		return reflect.Value{}, false
	}
	v = v.Elem()
	return v, v.Kind() == reflect.Struct
}

func field0(obj runtime.Object, name string) any {
	v, ok := structValue(obj)
	if !ok {
		return nil
	}
	f := v.FieldByName(name)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// nonMetaEqual reports whether obj and old agree in every field but their
// TypeMeta and ObjectMeta.
func nonMetaEqual(obj, old runtime.Object) bool {
	v, ok1 := structValue(obj)
	ov, ok2 := structValue(old)
	if !ok1 || !ok2 || v.Type() != ov.Type() {
		return false
	}
	for i := 0; i < v.NumField(); i++ {
		if n := v.Type().Field(i).Name; n == "TypeMeta" || n == "ObjectMeta" {
			continue
		}
		if !equality.Semantic.DeepEqual(v.Field(i).Interface(), ov.Field(i).Interface()) {
			return false
		}
	}
	return true
}

func resetField(obj runtime.Object, name string) {
	v, ok := structValue(obj)
	if !ok {
		return
	}
	if f := v.FieldByName(name); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

func copyField(dst, src runtime.Object, name string) {
	dv, ok := structValue(dst)
	if !ok {
		return
	}
	sv, ok := structValue(src)
	if !ok {
		return
	}
	df, sf := dv.FieldByName(name), sv.FieldByName(name)
	if df.IsValid() && sf.IsValid() && df.CanSet() {
		// Deep copy through the object's own DeepCopy, via a copy of src.
		cp := src.DeepCopyObject()
		cv, _ := structValue(cp)
		df.Set(cv.FieldByName(name))
	}
}
