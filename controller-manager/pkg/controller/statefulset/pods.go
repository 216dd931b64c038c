package statefulset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// The pod and claim event verbs; their events are "Successful<Verb>" and
// "Failed<Verb>" as upstream's (SuccessfulCreate, FailedCreate,
// SuccessfulDelete, FailedDelete, SuccessfulUpdate, FailedUpdate).
const (
	verbCreate = "create"
	verbUpdate = "update"
	verbDelete = "delete"
)

// ConflictingControllerReason is the event of a claim another controller
// manages, so the retention policy leaves it alone.
const ConflictingControllerReason = "ConflictingController"

func title(verb string) string { return strings.ToUpper(verb[:1]) + verb[1:] }

func (c *Controller) recordPodEvent(verb string, set *appsv1.StatefulSet, pod *corev1.Pod, err error) {
	if err == nil {
		c.recorder.Event(set, corev1.EventTypeNormal, "Successful"+title(verb),
			fmt.Sprintf("%s Pod %s in StatefulSet %s successful", verb, pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, corev1.EventTypeWarning, "Failed"+title(verb),
		fmt.Sprintf("%s Pod %s in StatefulSet %s failed error: %s", verb, pod.Name, set.Name, err))
}

func (c *Controller) recordClaimEvent(verb string, set *appsv1.StatefulSet, pod *corev1.Pod, claim *corev1.PersistentVolumeClaim, err error) {
	if err == nil {
		c.recorder.Event(set, corev1.EventTypeNormal, "Successful"+title(verb),
			fmt.Sprintf("%s Claim %s Pod %s in StatefulSet %s success", verb, claim.Name, pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, corev1.EventTypeWarning, "Failed"+title(verb),
		fmt.Sprintf("%s Claim %s for Pod %s in StatefulSet %s failed error: %s", verb, claim.Name, pod.Name, set.Name, err))
}

// createStatefulPod creates pod's claims, then pod, then sets the claims'
// ownerReferences for the retention policy.
func (c *Controller) createStatefulPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := c.createPersistentVolumeClaims(ctx, set, pod); err != nil {
		c.recordPodEvent(verbCreate, set, pod, err)
		return err
	}
	created, err := c.client.CoreV1().Pods(set.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// The cache is behind: the next sync sees the pod.
		return err
	}
	if err == nil {
		// The claims' pod references need the pod's UID.
		if err = c.updatePodClaimForRetentionPolicy(ctx, set, created); err != nil {
			c.recordPodEvent(verbUpdate, set, pod, err)
			return err
		}
	}
	c.recordPodEvent(verbCreate, set, pod, err)
	return err
}

// updateStatefulPod restores pod's identity and storage and its claims'
// ownerReferences, updating the pod (a copy) when it changed.
func (c *Controller) updateStatefulPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	attempted := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		consistent := true
		if !identityMatches(set, pod) {
			updateIdentity(set, pod)
			consistent = false
		}
		if !storageMatches(set, pod) {
			updateStorage(set, pod)
			consistent = false
			if err := c.createPersistentVolumeClaims(ctx, set, pod); err != nil {
				c.recordPodEvent(verbUpdate, set, pod, err)
				return err
			}
		}
		match, err := c.claimsMatchRetentionPolicy(ctx, set, pod)
		if err != nil {
			c.recordPodEvent(verbUpdate, set, pod, err)
			return err
		}
		if !match {
			if err := c.updatePodClaimForRetentionPolicy(ctx, set, pod); err != nil {
				c.recordPodEvent(verbUpdate, set, pod, err)
				return err
			}
			consistent = false
		}
		if consistent {
			return nil
		}
		attempted = true
		_, updateErr := c.client.CoreV1().Pods(set.Namespace).Update(ctx, pod, metav1.UpdateOptions{})
		if updateErr == nil {
			return nil
		}
		if fresh, err := c.podLister.Pods(set.Namespace).Get(pod.Name); err == nil {
			pod = fresh.DeepCopy()
		} else {
			utilruntime.HandleError(fmt.Errorf("getting pod %s/%s after a failed update: %w", set.Namespace, pod.Name, err))
		}
		return updateErr
	})
	if attempted {
		c.recordPodEvent(verbUpdate, set, pod, err)
	}
	return err
}

func (c *Controller) deleteStatefulPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
	c.recordPodEvent(verbDelete, set, pod, err)
	return err
}

// createPersistentVolumeClaims creates pod's claims that do not exist; a
// claim being deleted is an error (the pod must wait for it to go).
func (c *Controller) createPersistentVolumeClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	var errs []error
	for _, claim := range getPersistentVolumeClaims(set, pod) {
		existing, err := c.pvcLister.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
		switch {
		case apierrors.IsNotFound(err):
			_, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Create(ctx, &claim, metav1.CreateOptions{})
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
			}
			if err == nil || !apierrors.IsAlreadyExists(err) {
				c.recordClaimEvent(verbCreate, set, pod, &claim, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", claim.Name, err))
			c.recordClaimEvent(verbCreate, set, pod, &claim, err)
		case existing.DeletionTimestamp != nil:
			errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
		}
	}
	return errors.Join(errs...)
}

// createMissingPersistentVolumeClaims recreates the claims of a pending
// pod (deleted while the pod waited for them), logging the ones being
// deleted instead of failing.
func (c *Controller) createMissingPersistentVolumeClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := c.createPersistentVolumeClaims(ctx, set, pod); err != nil {
		klog.FromContext(ctx).V(4).Info("Could not create missing claims of a pending pod", "pod", klog.KObj(pod), "err", err)
		return err
	}
	return nil
}

// claimsMatchRetentionPolicy reports whether pod's existing claims have the
// ownerReferences set's retention policy wants.
func (c *Controller) claimsMatchRetentionPolicy(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	logger := klog.FromContext(ctx)
	ordinal := getOrdinal(pod)
	for i := range set.Spec.VolumeClaimTemplates {
		name := getPersistentVolumeClaimName(set, &set.Spec.VolumeClaimTemplates[i], ordinal)
		claim, err := c.pvcLister.PersistentVolumeClaims(set.Namespace).Get(name)
		switch {
		case apierrors.IsNotFound(err):
			logger.V(4).Info("Expected claim missing, continuing to pick up in next iteration", "pvc", klog.KRef(set.Namespace, name))
		case err != nil:
			return false, fmt.Errorf("could not retrieve claim %s for %s when checking PVC deletion policy: %w", name, pod.Name, err)
		default:
			if !isClaimOwnerUpToDate(logger, claim, set, pod) {
				return false, nil
			}
		}
	}
	return true, nil
}

// updatePodClaimForRetentionPolicy sets the ownerReferences of pod's
// claims for set's retention policy.
func (c *Controller) updatePodClaimForRetentionPolicy(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	logger := klog.FromContext(ctx)
	ordinal := getOrdinal(pod)
	for i := range set.Spec.VolumeClaimTemplates {
		name := getPersistentVolumeClaimName(set, &set.Spec.VolumeClaimTemplates[i], ordinal)
		claim, err := c.pvcLister.PersistentVolumeClaims(set.Namespace).Get(name)
		if p := retentionPolicy(set); apierrors.IsNotFound(err) && (p.WhenDeleted != retain || p.WhenScaled != retain) {
			// Just created: the cache is behind; read it from the server.
			claim, err = c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Get(ctx, name, metav1.GetOptions{})
		}
		switch {
		case apierrors.IsNotFound(err):
			logger.V(4).Info("Expected claim missing, continuing to pick up in next iteration", "pvc", klog.KRef(set.Namespace, name))
		case err != nil:
			return fmt.Errorf("could not retrieve claim %s for %s when checking PVC deletion policy: %w", name, pod.Name, err)
		default:
			if hasUnexpectedController(claim, set, pod) {
				c.recorder.Event(set, corev1.EventTypeWarning, ConflictingControllerReason,
					fmt.Sprintf("PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", name))
			}
			if isClaimOwnerUpToDate(logger, claim, set, pod) {
				continue
			}
			claim = claim.DeepCopy()
			updateClaimOwnerRefForSetAndPod(claim, set, pod)
			if _, err := c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", name, err)
			}
		}
	}
	return nil
}

// podClaimIsStale reports whether, under whenScaled Delete, one of pod's
// claims still belongs to an earlier pod of the same name (its deletion
// is pending): the pod must not be created on it.
func (c *Controller) podClaimIsStale(set *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	if retentionPolicy(set).WhenScaled == retain {
		return false, nil
	}
	for _, claim := range getPersistentVolumeClaims(set, pod) {
		existing, err := c.pvcLister.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, err
		default:
			if hasStaleOwnerRef(existing, pod, podKind) {
				return true, nil
			}
		}
	}
	return false, nil
}
