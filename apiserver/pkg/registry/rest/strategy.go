// Package rest holds what every kind's registry package builds its strategy
// from: the Strategy interface the store calls, the generic strategy (status
// split, generation, create-on-update), and the adapters that turn a kind's
// typed validation, defaulting and scale functions into the store's untyped
// hooks. It imports no kind's package; the kinds' packages import it.
package rest

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"
)

// SubStatus names the status subresource.
const SubStatus = "status"

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

// ResetFieldsStrategy is upstream's: a strategy that names the fields a
// write through it leaves as they were, which therefore nobody comes to own
// through it (server-side apply's reset fields). A strategy that does not
// implement it resets nothing.
type ResetFieldsStrategy interface {
	GetResetFields() []fieldpath.Path
}

var _ ResetFieldsStrategy = Generic{}

// Split describes how a kind splits spec and status.
type Split int

const (
	// NoStatus: the whole object is written by the main endpoint.
	NoStatus Split = iota
	// MainEndpoint: status is kept from the old object.
	MainEndpoint
	// StatusEndpoint: only status (and nothing else) changes.
	StatusEndpoint
)

// Generic covers most kinds: the kind's validation, spec/status split by
// reflection, and generation bumped when the spec changes for kinds that
// track it. A kind's package builds one with Main, Status or Whole and the
// options below, and embeds it when the kind needs more.
type Generic struct {
	split           Split
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
	// keepOnStatus is called by the status endpoint to keep metadata the
	// status may not change (a Deployment's labels, a pod's owners).
	keepOnStatus   func(obj, old runtime.Object)
	validate       func(obj runtime.Object) field.ErrorList
	validateUpdate func(obj, old runtime.Object) field.ErrorList
	// resetFields are reset beyond what the split resets.
	resetFields []fieldpath.Path
}

var _ Strategy = Generic{}

// Option sets one property of a Generic strategy.
type Option func(*Generic)

func build(split Split, opts []Option) Generic {
	s := Generic{split: split, unconditional: true}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// Main is the strategy of the main endpoint of a kind with a status: the
// status is kept from the old object (and cleared on create).
func Main(opts ...Option) Generic { return build(MainEndpoint, opts) }

// Status is the strategy of the status subresource: only the status changes.
func Status(opts ...Option) Generic { return build(StatusEndpoint, opts) }

// Whole is the strategy of a kind without a status.
func Whole(opts ...Option) Generic { return build(NoStatus, opts) }

// WithGeneration: metadata.generation starts at 1 and grows with each change
// of the spec (or, for a kind without status, of anything but metadata).
func WithGeneration(s *Generic) { s.trackGeneration = true }

// WithLabelsInGeneration: a change of labels bumps the generation too.
func WithLabelsInGeneration(s *Generic) { s.trackGeneration, s.labelsInGeneration = true, true }

// WithCreateOnUpdate lets PUT create a missing object.
func WithCreateOnUpdate(s *Generic) { s.createOnUpdate = true }

// ConditionalUpdate: an update must name the resourceVersion it read, as
// upstream's strategies of these kinds say (AllowUnconditionalUpdate false).
func ConditionalUpdate(s *Generic) { s.unconditional = false }

// WithStatusOnCreate keeps the status a client creates the object with.
func WithStatusOnCreate(s *Generic) { s.statusOnCreate = true }

// ResetFields adds paths to the fields a write through the strategy leaves
// as they were (a pod's status keeps metadata.ownerReferences).
func ResetFields(paths ...fieldpath.Path) Option {
	return func(s *Generic) { s.resetFields = append(s.resetFields, paths...) }
}

// PrepareCreate sets fn to run on create after the generic preparation.
func PrepareCreate(fn func(obj runtime.Object)) Option {
	return func(s *Generic) { s.prepareForCreate = fn }
}

// KeepOnStatus sets fn to keep, on the status endpoint, metadata a status
// update may not change.
func KeepOnStatus[T runtime.Object](fn func(obj, old T)) Option {
	return func(s *Generic) {
		s.keepOnStatus = func(obj, old runtime.Object) {
			o, ok1 := obj.(T)
			p, ok2 := old.(T)
			if ok1 && ok2 {
				fn(o, p)
			}
		}
	}
}

// Validation sets the kind's validation of a new object and of an update.
// update may be nil when an update is validated as a new object is.
func Validation[T runtime.Object](create func(T) field.ErrorList, update func(obj, old T) field.ErrorList) Option {
	return func(s *Generic) {
		s.validate = Validate(create)
		s.validateUpdate = ValidateUpdate(create, update)
	}
}

// UpdateValidation overrides the validation of an update only (a status
// endpoint's own rules).
func UpdateValidation[T runtime.Object](update func(obj, old T) field.ErrorList) Option {
	return func(s *Generic) { s.validateUpdate = ValidateUpdate(nil, update) }
}

// Validate adapts a kind's typed validation to any object: a nil object is
// an internal error, and an object of another kind is not validated.
func Validate[T runtime.Object](create func(T) field.ErrorList) func(runtime.Object) field.ErrorList {
	return func(obj runtime.Object) field.ErrorList {
		if IsNil(obj) {
			return nilObjectError(obj)
		}
		o, ok := obj.(T)
		if !ok || create == nil {
			return nil
		}
		return create(o)
	}
}

// ValidateUpdate adapts a kind's typed update validation (or, when update is
// nil, its validation of a new object) to any pair of objects: a nil object
// is an internal error, and so is an update from an object of another kind.
func ValidateUpdate[T runtime.Object](create func(T) field.ErrorList, update func(obj, old T) field.ErrorList) func(obj, old runtime.Object) field.ErrorList {
	return func(obj, old runtime.Object) field.ErrorList {
		if IsNil(obj) {
			return nilObjectError(obj)
		}
		if IsNil(old) {
			return nilObjectError(old)
		}
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		p, ok := old.(T)
		if !ok {
			return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("cannot validate an update of a %T to a %T", old, obj))}
		}
		if update == nil {
			if create == nil {
				return nil
			}
			return create(o)
		}
		return update(o, p)
	}
}

// IsNil reports whether obj is nil or a typed nil pointer.
func IsNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func nilObjectError(obj runtime.Object) field.ErrorList {
	return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("nil %T object", obj))}
}

func (s Generic) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if s.split != NoStatus && !s.statusOnCreate {
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

func (s Generic) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	switch s.split {
	case NoStatus:
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
	case MainEndpoint:
		CopyField(obj, old, "Status")
		if s.trackGeneration && !equality.Semantic.DeepEqual(field0(obj, "Spec"), field0(old, "Spec")) {
			if m, err := meta.Accessor(obj); err == nil {
				m.SetGeneration(m.GetGeneration() + 1)
			}
		}
	case StatusEndpoint:
		// As upstream's status strategies: the spec is kept; metadata may
		// change (a Deployment controller writes its revision annotation
		// with the status), except what the kind keeps (a Deployment's
		// labels, a pod's owners: old kubelets corrupted them).
		CopyField(obj, old, "Spec")
		if s.keepOnStatus != nil {
			s.keepOnStatus(obj, old)
		}
	}
}

func (s Generic) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	if s.validate == nil {
		if IsNil(obj) {
			return nilObjectError(obj)
		}
		return nil
	}
	return s.validate(obj)
}

func (s Generic) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	if s.validateUpdate == nil {
		return ValidateUpdate[runtime.Object](nil, nil)(obj, old)
	}
	return s.validateUpdate(obj, old)
}

// SplitOf is how the strategy splits spec and status.
func (s Generic) SplitOf() Split { return s.split }

// Subresource names the endpoint the strategy serves.
func (s Generic) Subresource() string {
	if s.split == StatusEndpoint {
		return SubStatus
	}
	return ""
}

// GetResetFields: the main endpoint of a kind with status resets the
// status, the status endpoint the spec, each with the kind's own additions.
func (s Generic) GetResetFields() []fieldpath.Path {
	var paths []fieldpath.Path
	switch s.split {
	case MainEndpoint:
		paths = append(paths, fieldpath.MakePathOrDie("status"))
	case StatusEndpoint:
		paths = append(paths, fieldpath.MakePathOrDie("spec"))
	}
	return append(paths, s.resetFields...)
}

func (s Generic) AllowCreateOnUpdate() bool      { return s.createOnUpdate }
func (s Generic) AllowUnconditionalUpdate() bool { return s.unconditional }

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

// CopyField sets dst's field name (Spec, Status) to a deep copy of src's.
func CopyField(dst, src runtime.Object, name string) {
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
