package endpointslice

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PodLabelIndex is the pod informer index that files each pod under
// "<namespace>/<key>=<value>" for each of its labels, so a Service's pods
// are found without scanning its namespace: a sync of a Service in a
// namespace of 10,000 pods reads the pods of its rarest selector label,
// not all 10,000 (upstream's pod lister scans the namespace).
const PodLabelIndex = "skiff.dev/pod-label"

func podLabelIndexKey(namespace, key, value string) string {
	return namespace + "/" + key + "=" + value
}

func podLabelIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("indexing by label: %T is not a Pod", obj)
	}
	out := make([]string, 0, len(pod.Labels))
	for k, v := range pod.Labels {
		out = append(out, podLabelIndexKey(pod.Namespace, k, v))
	}
	return out, nil
}

// AddPodLabelIndex adds PodLabelIndex to the pod informer, unless it has
// it; it must run before the informer starts.
func AddPodLabelIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[PodLabelIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{PodLabelIndex: podLabelIndexFunc})
}

// SelectedPods returns the pods of namespace that selector (a Service's
// selector: every key equal to its value) selects, from an indexer with
// PodLabelIndex. An empty selector selects nothing.
func SelectedPods(indexer cache.Indexer, namespace string, selector map[string]string) ([]*corev1.Pod, error) {
	var smallest []any
	first := true
	for k, v := range selector {
		objs, err := indexer.ByIndex(PodLabelIndex, podLabelIndexKey(namespace, k, v))
		if err != nil {
			return nil, err
		}
		if first || len(objs) < len(smallest) {
			smallest, first = objs, false
		}
		if len(smallest) == 0 {
			break
		}
	}
	out := make([]*corev1.Pod, 0, len(smallest))
	for _, o := range smallest {
		if pod := o.(*corev1.Pod); selectorMatches(selector, pod.Labels) {
			out = append(out, pod)
		}
	}
	return out, nil
}

// selectorMatches reports whether a Service selector (equality of every
// key; empty matches nothing, as a Service without a selector selects no
// pods) selects a pod with podLabels.
func selectorMatches(selector, podLabels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if got, ok := podLabels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
