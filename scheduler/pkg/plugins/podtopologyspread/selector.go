package podtopologyspread

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/scheduler/pkg/framework"
)

var (
	rcKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	ssKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
)

// defaultSelector is upstream's helper.DefaultSelector: the union of the
// selectors of the Services selecting the pod and of its controlling
// ReplicationController, ReplicaSet or StatefulSet. Kinds the API server
// does not serve (nil listers) contribute nothing.
func defaultSelector(pod *corev1.Pod, l framework.Listers) labels.Selector {
	set := labels.Set{}
	if l.Services != nil {
		if svcs, err := l.Services.Services(pod.Namespace).List(labels.Everything()); err == nil {
			for _, svc := range svcs {
				// A nil selector matches nothing, not everything.
				if svc.Spec.Selector == nil {
					continue
				}
				if labels.Set(svc.Spec.Selector).AsSelectorPreValidated().Matches(labels.Set(pod.Labels)) {
					set = labels.Merge(set, svc.Spec.Selector)
				}
			}
		}
	}
	selector := set.AsSelector()
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return selector
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return selector
	}
	addSelector := func(ls *metav1.LabelSelector) {
		if other, err := metav1.LabelSelectorAsSelector(ls); err == nil {
			if r, ok := other.Requirements(); ok {
				selector = selector.Add(r...)
			}
		}
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		if l.ReplicationControllers != nil {
			if rc, err := l.ReplicationControllers.ReplicationControllers(pod.Namespace).Get(owner.Name); err == nil {
				set = labels.Merge(set, rc.Spec.Selector)
				selector = set.AsSelector()
			}
		}
	case rsKind:
		if l.ReplicaSets != nil {
			if rs, err := l.ReplicaSets.ReplicaSets(pod.Namespace).Get(owner.Name); err == nil {
				addSelector(rs.Spec.Selector)
			}
		}
	case ssKind:
		if l.StatefulSets != nil {
			if ss, err := l.StatefulSets.StatefulSets(pod.Namespace).Get(owner.Name); err == nil {
				addSelector(ss.Spec.Selector)
			}
		}
	}
	return selector
}
