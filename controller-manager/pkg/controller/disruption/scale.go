package disruption

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// controllerAndScale is a pod's controller and how many pods it wants.
type controllerAndScale struct {
	uid   types.UID
	scale int32
}

// finder returns the controller ref points to and its scale, nil when ref
// is not of the finder's kind or not found.
type finder func(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error)

func (c *Controller) finders() []finder {
	return []finder{c.replicationController, c.deployment, c.replicaSet, c.statefulSet, c.scaleSubresource}
}

// expectedScale sums the scale of the controllers of pods, each counted
// once; pods without a controller are returned as unmanaged. A pod whose
// controller cannot be found is an error.
func (c *Controller) expectedScale(ctx context.Context, pods []*corev1.Pod) (int32, []string, error) {
	scales := map[types.UID]int32{}
	var unmanaged []string
	for _, pod := range pods {
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		found := false
		for _, find := range c.finders() {
			cs, err := find(ctx, ref, pod.Namespace)
			if err != nil {
				return 0, nil, err
			}
			if cs != nil {
				scales[cs.uid], found = cs.scale, true
				break
			}
		}
		if !found {
			return 0, nil, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
	}
	var total int32
	for _, n := range scales {
		total += n
	}
	return total, unmanaged, nil
}

// verifyGroupKind reports whether ref is a kind in one of groups.
func verifyGroupKind(ref *metav1.OwnerReference, kind string, groups []string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	return ref.Kind == kind && slices.Contains(groups, gv.Group), nil
}

func replicasOr1(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

var appsGroups = []string{"apps", "extensions"}

// replicaSet finds a ReplicaSet that no Deployment controls.
func (c *Controller) replicaSet(_ context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	ok, err := verifyGroupKind(ref, "ReplicaSet", appsGroups)
	if !ok || err != nil {
		return nil, err
	}
	rs, err := c.rsLister.ReplicaSets(namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		// Only NotFound can happen here.
		return nil, nil
	}
	if owner := metav1.GetControllerOfNoCopy(rs); owner != nil && owner.Kind == "Deployment" {
		return nil, nil
	}
	return &controllerAndScale{rs.UID, replicasOr1(rs.Spec.Replicas)}, nil
}

// deployment finds the Deployment of a pod's ReplicaSet.
func (c *Controller) deployment(_ context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	ok, err := verifyGroupKind(ref, "ReplicaSet", appsGroups)
	if !ok || err != nil {
		return nil, err
	}
	rs, err := c.rsLister.ReplicaSets(namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil, nil
	}
	owner := metav1.GetControllerOfNoCopy(rs)
	if owner == nil {
		return nil, nil
	}
	ok, err = verifyGroupKind(owner, "Deployment", appsGroups)
	if !ok || err != nil {
		return nil, err
	}
	d, err := c.dLister.Deployments(namespace).Get(owner.Name)
	if err != nil || d.UID != owner.UID {
		return nil, nil
	}
	return &controllerAndScale{d.UID, replicasOr1(d.Spec.Replicas)}, nil
}

func (c *Controller) replicationController(_ context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	ok, err := verifyGroupKind(ref, "ReplicationController", []string{""})
	if !ok || err != nil {
		return nil, err
	}
	rc, err := c.rcLister.ReplicationControllers(namespace).Get(ref.Name)
	if err != nil || rc.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{rc.UID, replicasOr1(rc.Spec.Replicas)}, nil
}

func (c *Controller) statefulSet(_ context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	ok, err := verifyGroupKind(ref, "StatefulSet", []string{"apps"})
	if !ok || err != nil {
		return nil, err
	}
	ss, err := c.ssLister.StatefulSets(namespace).Get(ref.Name)
	if err != nil || ss.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{ss.UID, replicasOr1(ss.Spec.Replicas)}, nil
}

// scaleSubresource reads the scale of any other kind through its scale
// subresource, when the controller was given a scale client.
func (c *Controller) scaleSubresource(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	if c.scales == nil {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	mapping, err := c.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		return nil, err
	}
	gr := mapping.Resource.GroupResource()
	s, err := c.scales.Scales(namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// The object is gone, or its kind has no scale subresource.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{s.UID, s.Spec.Replicas}, nil
}
