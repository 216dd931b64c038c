package rest

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Defaults adapts a kind's typed defaulting to any object: objects of other
// kinds, and typed nil pointers, are left untouched.
func Defaults[T runtime.Object](fn func(T)) func(runtime.Object) {
	return func(obj runtime.Object) {
		if o, ok := obj.(T); ok && !IsNil(obj) {
			fn(o)
		}
	}
}

// FieldsFunc returns the kind-specific selectable fields of an object,
// beyond metadata.name and metadata.namespace.
type FieldsFunc func(obj runtime.Object) fields.Set

// AttrFunc builds the storage AttrFunc of a kind: its labels, and its
// metadata.name (and metadata.namespace when namespaced) with its own
// selectable fields.
func AttrFunc(namespaced bool, extra FieldsFunc) func(runtime.Object) (labels.Set, fields.Set, error) {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		f := fields.Set{"metadata.name": m.GetName()}
		if namespaced {
			f["metadata.namespace"] = m.GetNamespace()
		}
		if extra != nil {
			for k, v := range extra(obj) {
				f[k] = v
			}
		}
		return labels.Set(m.GetLabels()), f, nil
	}
}

// SharedStorage serves a kind from another resource's storage, converting
// objects on the way in and out (events.k8s.io Events are core Events).
type SharedStorage struct {
	// Resource is the core resource whose storage is shared.
	Group, Resource string
	ToStored        func(runtime.Object) (runtime.Object, error)
	FromStored      func(runtime.Object) (runtime.Object, error)
	ListFromStored  func(runtime.Object) (runtime.Object, error)
	NewStoredList   func() runtime.Object
	// FieldLabels maps the served kind's selectable fields to the stored
	// kind's; StoredFields are the stored kind's attributes, which the
	// storage filters with.
	FieldLabels  map[string]string
	StoredFields func(runtime.Object) (labels.Set, fields.Set, error)
}

// ScaleAccessor reads and writes the replica count of a scalable kind.
type ScaleAccessor struct {
	// Get builds the Scale view of obj.
	Get func(obj runtime.Object) (*autoscalingv1.Scale, error)
	// Set writes replicas into obj.
	Set func(obj runtime.Object, replicas int32) error
	// ReplicasPath is where the replicas are in the object's JSON
	// (spec.replicas when nil), for a server-side apply of the scale.
	ReplicasPath []string
}

// SpecReplicasPath is where the replicas are in the object's JSON.
func (a *ScaleAccessor) SpecReplicasPath() []string {
	if len(a.ReplicasPath) > 0 {
		return a.ReplicasPath
	}
	return []string{"spec", "replicas"}
}

// ScaleFields point into a scalable object.
type ScaleFields struct {
	Meta           *metav1.ObjectMeta
	Replicas       **int32
	StatusReplicas int32
	Selector       *metav1.LabelSelector
}

// ScaleOf builds the ScaleAccessor of a kind from where its fields are.
func ScaleOf[T runtime.Object](fields func(T) ScaleFields) *ScaleAccessor {
	typed := func(obj runtime.Object) (ScaleFields, error) {
		t, ok := obj.(T)
		if !ok {
			var want T
			return ScaleFields{}, fmt.Errorf("expected a %T, got %T", want, obj)
		}
		return fields(t), nil
	}
	return &ScaleAccessor{
		Get: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			f, err := typed(obj)
			if err != nil {
				return nil, err
			}
			return &autoscalingv1.Scale{
				TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
				ObjectMeta: scaleMeta(*f.Meta),
				Spec:       autoscalingv1.ScaleSpec{Replicas: replicasOf(*f.Replicas)},
				Status:     autoscalingv1.ScaleStatus{Replicas: f.StatusReplicas, Selector: selectorString(f.Selector)},
			}, nil
		},
		Set: func(obj runtime.Object, replicas int32) error {
			f, err := typed(obj)
			if err != nil {
				return err
			}
			*f.Replicas = &replicas
			return nil
		},
	}
}

func scaleMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID,
		ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp,
	}
}

func selectorString(sel *metav1.LabelSelector) string {
	if sel == nil {
		return ""
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return ""
	}
	return s.String()
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
