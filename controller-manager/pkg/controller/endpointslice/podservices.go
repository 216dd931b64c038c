package endpointslice

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// ServicesForPod returns the keys of the Services of pod's namespace whose
// selector selects it. A Service without a selector selects nothing.
func ServicesForPod(lister corelisters.ServiceLister, pod *corev1.Pod) (sets.Set[string], error) {
	out := sets.New[string]()
	svcs, err := lister.Services(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, svc := range svcs {
		if selectorMatches(svc.Spec.Selector, pod.Labels) {
			out.Insert(svc.Namespace + "/" + svc.Name)
		}
	}
	return out, nil
}

// ServicesToUpdateOnPodChange returns the Services whose endpoints a pod
// update may change: none for a resync or a change endpoints do not show;
// the pod's Services when its IPs, readiness, deletion or phase changed;
// and, when its labels (or hostname, subdomain) changed, the Services it
// left or joined too.
func ServicesToUpdateOnPodChange(lister corelisters.ServiceLister, old, cur *corev1.Pod) sets.Set[string] {
	if old.ResourceVersion == cur.ResourceVersion {
		return nil
	}
	podChanged, labelsChanged := podEndpointsChanged(old, cur)
	if !podChanged && !labelsChanged {
		return nil
	}
	svcs, err := ServicesForPod(lister, cur)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("unable to get pod %s/%s's services: %w", cur.Namespace, cur.Name, err))
		return nil
	}
	if labelsChanged {
		oldSvcs, err := ServicesForPod(lister, old)
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("unable to get pod %s/%s's services: %w", old.Namespace, old.Name, err))
		}
		if podChanged {
			svcs = svcs.Union(oldSvcs)
		} else {
			// Only the membership changed: the Services it joined or left.
			svcs = svcs.SymmetricDifference(oldSvcs)
		}
	}
	return svcs
}

// podEndpointsChanged reports whether the pod changed in a way its
// endpoints show, and whether its labels, hostname or subdomain changed
// (which may change the Services it belongs to).
func podEndpointsChanged(old, cur *corev1.Pod) (podChanged, labelsChanged bool) {
	labelsChanged = !maps.Equal(old.Labels, cur.Labels) ||
		old.Spec.Hostname != cur.Spec.Hostname || old.Spec.Subdomain != cur.Spec.Subdomain
	switch {
	case !old.DeletionTimestamp.Equal(cur.DeletionTimestamp),
		controllerutil.IsPodReady(old) != controllerutil.IsPodReady(cur),
		old.Status.PodIP != cur.Status.PodIP,
		!slices.Equal(old.Status.PodIPs, cur.Status.PodIPs),
		old.Spec.NodeName != cur.Spec.NodeName,
		isTerminal(old) != isTerminal(cur):
		podChanged = true
	}
	return podChanged, labelsChanged
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// PodFromDeleteAction unwraps a pod from an informer's delete event.
func PodFromDeleteAction(obj any) *corev1.Pod {
	if pod, ok := obj.(*corev1.Pod); ok {
		return pod
	}
	tomb, ok := obj.(cache.DeletedFinalStateUnknown)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
		return nil
	}
	pod, ok := tomb.Obj.(*corev1.Pod)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("tombstone contained object that is not a Pod: %#v", obj))
		return nil
	}
	return pod
}
