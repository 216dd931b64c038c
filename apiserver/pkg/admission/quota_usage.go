package admission

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const storageClassSuffix = ".storageclass.storage.k8s.io/"

// objectCountName is upstream's count/<resource>[.<group>].
func objectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }

// Usage is what obj (of resource gr) counts against a quota, as upstream's
// evaluators compute it.
func Usage(gr schema.GroupResource, obj runtime.Object) corev1.ResourceList {
	out := corev1.ResourceList{objectCountName(gr): one()}
	if gr.Group != "" {
		return out
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		addPodUsage(out, o)
	case *corev1.Service:
		out[corev1.ResourceServices] = one()
		ports := *resource.NewQuantity(int64(len(o.Spec.Ports)), resource.DecimalSI)
		switch o.Spec.Type {
		case corev1.ServiceTypeNodePort:
			out[corev1.ResourceServicesNodePorts] = ports
		case corev1.ServiceTypeLoadBalancer:
			if o.Spec.AllocateLoadBalancerNodePorts == nil || *o.Spec.AllocateLoadBalancerNodePorts {
				out[corev1.ResourceServicesNodePorts] = ports
			}
			out[corev1.ResourceServicesLoadBalancers] = one()
		}
	case *corev1.PersistentVolumeClaim:
		addClaimUsage(out, o)
	case *corev1.ConfigMap:
		out[corev1.ResourceConfigMaps] = one()
	case *corev1.Secret:
		out[corev1.ResourceSecrets] = one()
	case *corev1.ReplicationController:
		out[corev1.ResourceReplicationControllers] = one()
	case *corev1.ResourceQuota:
		out[corev1.ResourceQuotas] = one()
	}
	return out
}

// podTerminal: succeeded and failed pods no longer count (except count/pods).
func podTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func addPodUsage(out corev1.ResourceList, pod *corev1.Pod) {
	if podTerminal(pod) {
		return
	}
	out[corev1.ResourcePods] = one()
	requests, limits := podTotals(pod)
	for name, v := range pod.Spec.Overhead {
		if _, ok := requests[name]; ok {
			q := requests[name]
			q.Add(v)
			requests[name] = q
		}
		if _, ok := limits[name]; ok {
			q := limits[name]
			q.Add(v)
			limits[name] = q
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := requests[name]; ok {
			out[name] = q
			out[corev1.ResourceName("requests."+string(name))] = q
		}
		if q, ok := limits[name]; ok {
			out[corev1.ResourceName("limits."+string(name))] = q
		}
	}
	for name, q := range requests {
		s := string(name)
		if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) {
			out[name] = q
			out[corev1.ResourceName("requests."+s)] = q
		} else if strings.Contains(s, "/") && !strings.HasPrefix(s, "kubernetes.io/") && !strings.HasPrefix(s, "requests.") {
			out[corev1.ResourceName("requests."+s)] = q
		}
	}
}

func addClaimUsage(out corev1.ResourceList, pvc *corev1.PersistentVolumeClaim) {
	class := ""
	if v, ok := pvc.Annotations["volume.beta.kubernetes.io/storage-class"]; ok {
		class = v
	} else if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	out[corev1.ResourcePersistentVolumeClaims] = one()
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one()
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		r := q.DeepCopy()
		r.RoundUp(0)
		out[corev1.ResourceRequestsStorage] = r
		if class != "" {
			out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = r
		}
	}
}

// quotaAdd returns a+b; quotaSub returns a-b floored at zero.
func quotaAdd(a, b corev1.ResourceList) corev1.ResourceList {
	out := a.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for k, v := range b {
		q := out[k]
		q.Add(v)
		out[k] = q
	}
	return out
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
