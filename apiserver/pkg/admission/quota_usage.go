package admission

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/component-base/quota"
)

// Usage is what obj (of resource gr) counts against a quota now, as
// upstream's evaluators compute it (component-base/quota, which the
// controller manager's resource quota controller uses too).
func Usage(gr schema.GroupResource, obj runtime.Object) corev1.ResourceList {
	return quota.Usage(gr, obj, time.Now())
}

// podTerminal: succeeded and failed pods no longer count (except count/pods).
func podTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func quotaSub(a, b corev1.ResourceList) corev1.ResourceList {
	out := a.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for k, v := range b {
		q, ok := out[k]
		if !ok {
			continue
		}
		q.Sub(v)
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		out[k] = q
	}
	return out
}

// mask keeps the entries of list named in names.
func mask(list corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		if q, ok := list[n]; ok {
			out[n] = q
		}
	}
	return out
}

// prettyPrint is upstream's: sorted name=value pairs joined by commas.
func prettyPrint(list corev1.ResourceList) string {
	parts := make([]string, 0, len(list))
	for _, k := range sortedNames(list) {
		q := list[k]
		parts = append(parts, string(k)+"="+q.String())
	}
	return strings.Join(parts, ",")
}
