package rest

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A kind's typed validation, adapted: nil objects are internal errors, an
// update from another kind is an internal error, an object of another kind
// is not this strategy's to validate.
func TestValidationAdapters(t *testing.T) {
	calls := 0
	create := func(p *corev1.Pod) field.ErrorList {
		calls++
		return field.ErrorList{field.Required(field.NewPath("spec"), "")}
	}
	update := func(p, old *corev1.Pod) field.ErrorList {
		calls++
		return nil
	}
	s := Main(Validation(create, update))
	ctx := context.Background()
	internal := func(name string, errs field.ErrorList) {
		t.Helper()
		if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal {
			t.Errorf("%s: errors = %v, want one internal error", name, errs)
		}
	}
	internal("nil", s.Validate(ctx, nil))
	internal("typed nil", s.Validate(ctx, (*corev1.Pod)(nil)))
	internal("nil new", s.ValidateUpdate(ctx, (*corev1.Pod)(nil), &corev1.Pod{}))
	internal("typed nil old", s.ValidateUpdate(ctx, &corev1.Pod{}, (*corev1.Pod)(nil)))
	internal("nil old", s.ValidateUpdate(ctx, &corev1.Pod{}, nil))
	internal("old of another kind", s.ValidateUpdate(ctx, &corev1.Pod{}, &corev1.Service{}))
	if calls != 0 {
		t.Errorf("the kind's validation ran %d times on nil or mismatched objects", calls)
	}
	if errs := s.Validate(ctx, &corev1.ComponentStatus{}); errs != nil {
		t.Errorf("another kind: %v", errs)
	}
	if errs := s.ValidateUpdate(ctx, &corev1.ComponentStatus{}, &corev1.ComponentStatus{}); errs != nil {
		t.Errorf("another kind's update: %v", errs)
	}
	if errs := s.Validate(ctx, &corev1.Pod{}); len(errs) != 1 || calls != 1 {
		t.Errorf("create: errors = %v after %d calls", errs, calls)
	}
	if errs := s.ValidateUpdate(ctx, &corev1.Pod{}, &corev1.Pod{}); errs != nil || calls != 2 {
		t.Errorf("update: errors = %v after %d calls", errs, calls)
	}
	// Without an update function an update is validated as a new object.
	if errs := Whole(Validation(create, nil)).ValidateUpdate(ctx, &corev1.Pod{}, &corev1.Pod{}); len(errs) != 1 || calls != 3 {
		t.Errorf("update as create: errors = %v after %d calls", errs, calls)
	}
}

// The status endpoint keeps the spec and what the kind keeps of metadata;
// the main endpoint keeps the status and counts spec changes.
func TestSpecStatusSplit(t *testing.T) {
	ctx := context.Background()
	old := &appsv1.Deployment{}
	old.Generation, old.Labels = 2, map[string]string{"a": "1"}
	old.Spec.Paused, old.Status.Replicas = true, 3

	st := old.DeepCopy()
	st.Spec.Paused, st.Status.Replicas, st.Labels = false, 4, map[string]string{"a": "2"}
	Status(KeepOnStatus(func(d, old *appsv1.Deployment) { d.Labels = old.Labels })).PrepareForUpdate(ctx, st, old)
	if !st.Spec.Paused || st.Status.Replicas != 4 || st.Labels["a"] != "1" {
		t.Errorf("status update = %+v", st)
	}
	if got := Status().Subresource(); got != SubStatus {
		t.Errorf("status subresource = %q", got)
	}

	m := old.DeepCopy()
	m.Spec.Paused, m.Status.Replicas = false, 9
	Main(WithGeneration).PrepareForUpdate(ctx, m, old)
	if m.Status.Replicas != 3 || m.Generation != 3 {
		t.Errorf("main update: status %d, generation %d", m.Status.Replicas, m.Generation)
	}
	var created runtime.Object = &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 5}}
	Main(WithGeneration).PrepareForCreate(ctx, created)
	if d := created.(*appsv1.Deployment); d.Status.Replicas != 0 || d.Generation != 1 {
		t.Errorf("create: %+v", d)
	}
}

// Defaults runs the kind's defaulting only on its kind, never on nil.
func TestDefaultsAdapter(t *testing.T) {
	ran := 0
	d := Defaults(func(p *corev1.Pod) { ran++ })
	d(nil)
	d((*corev1.Pod)(nil))
	d(&corev1.Service{})
	d(&corev1.Pod{})
	if ran != 1 {
		t.Errorf("defaulting ran %d times, want 1", ran)
	}
}
