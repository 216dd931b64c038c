package registry

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/component-base/qos"
)

func prepareNamespace(obj runtime.Object) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return
	}
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	// Upstream: every namespace carries the "kubernetes" finalizer, which
	// the namespace controller removes once the namespace is empty.
	has := false
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			has = true
		}
	}
	if !has {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	// Upstream's NamespaceDefaultLabelName: kubernetes.io/metadata.name.
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// namespaceFinalizing: a namespace stays, Terminating, until the namespace
// controller has emptied it and cleared spec.finalizers.
func namespaceFinalizing(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) > 0
}

func preparePod(obj runtime.Object) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qos.Class(pod)}
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

// scaleFields point into a scalable object.
type scaleFields struct {
	meta           *metav1.ObjectMeta
	replicas       **int32
	statusReplicas int32
	selector       *metav1.LabelSelector
}

// scaleOf builds the ScaleAccessor of a kind from where its fields are.
func scaleOf[T runtime.Object](fields func(T) scaleFields) *ScaleAccessor {
	typed := func(obj runtime.Object) (scaleFields, error) {
		t, ok := obj.(T)
		if !ok {
			var want T
			return scaleFields{}, fmt.Errorf("expected a %T, got %T", want, obj)
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
				ObjectMeta: scaleMeta(*f.meta),
				Spec:       autoscalingv1.ScaleSpec{Replicas: replicasOf(*f.replicas)},
				Status:     autoscalingv1.ScaleStatus{Replicas: f.statusReplicas, Selector: selectorString(f.selector)},
			}, nil
		},
		Set: func(obj runtime.Object, replicas int32) error {
			f, err := typed(obj)
			if err != nil {
				return err
			}
			*f.replicas = &replicas
			return nil
		},
	}
}

func replicaSetScale() *ScaleAccessor {
	return scaleOf(func(rs *appsv1.ReplicaSet) scaleFields {
		return scaleFields{&rs.ObjectMeta, &rs.Spec.Replicas, rs.Status.Replicas, rs.Spec.Selector}
	})
}

func deploymentScale() *ScaleAccessor {
	return scaleOf(func(d *appsv1.Deployment) scaleFields {
		return scaleFields{&d.ObjectMeta, &d.Spec.Replicas, d.Status.Replicas, d.Spec.Selector}
	})
}
