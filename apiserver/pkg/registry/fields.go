package registry

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// FieldsFunc returns the kind-specific selectable fields of an object,
// beyond metadata.name and metadata.namespace.
type FieldsFunc func(obj runtime.Object) fields.Set

// attrFunc builds the storage AttrFunc for a resource.
func attrFunc(namespaced bool, extra FieldsFunc) func(runtime.Object) (labels.Set, fields.Set, error) {
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

// The selectable fields below are upstream's, per kind.

func podFields(obj runtime.Object) fields.Set {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	var podIPs []string
	for _, ip := range pod.Status.PodIPs {
		podIPs = append(podIPs, ip.IP)
	}
	return fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             podIP,
		"status.podIPs":            strings.Join(podIPs, ","),
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
}

func nodeFields(obj runtime.Object) fields.Set {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	return fields.Set{"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)}
}

func namespaceFields(obj runtime.Object) fields.Set {
	n, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil
	}
	return fields.Set{"status.phase": string(n.Status.Phase)}
}

func secretFields(obj runtime.Object) fields.Set {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil
	}
	return fields.Set{"type": string(s.Type)}
}

func eventFields(obj runtime.Object) fields.Set {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return nil
	}
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}

func replicaSetFields(obj runtime.Object) fields.Set {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return nil
	}
	return fields.Set{"status.replicas": strconv.Itoa(int(rs.Status.Replicas))}
}
