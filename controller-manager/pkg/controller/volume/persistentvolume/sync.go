package persistentvolume

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	volumeutil "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

// Upstream's event reasons (pkg/controller/volume/events).
const (
	EventFailedBinding        = "FailedBinding"
	EventVolumeMismatch       = "VolumeMismatch"
	EventClaimLost            = "ClaimLost"
	EventClaimMisbound        = "ClaimMisbound"
	EventWaitForFirstConsumer = "WaitForFirstConsumer"
	EventWaitForPodScheduled  = "WaitForPodScheduled"
	EventProvisioningFailed   = "ProvisioningFailed"
	EventExternalProvisioning = "ExternalProvisioning"
	EventVolumeFailedDelete   = "VolumeFailedDelete"
	EventVolumeFailedRecycle  = "VolumeFailedRecycle"
	EventVolumeUnknownReclaim = "VolumeUnknownReclaimPolicy"
)

// annDefaultClass marks the default StorageClass (and its beta spelling).
const (
	annDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	annBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// ---- claims

func (c *Controller) syncClaimKey(ctx context.Context, ns, name string) error {
	claim, err := c.claimLister.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// Its volume, if any, is released by the volume's own sync (the
		// volume event handler queued it).
		return nil
	}
	if err != nil {
		return err
	}
	if !metav1.HasAnnotation(claim.ObjectMeta, volumeutil.AnnBindCompleted) {
		return c.syncUnboundClaim(ctx, claim)
	}
	return c.syncBoundClaim(ctx, claim)
}

func (c *Controller) syncUnboundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	if claim.Spec.VolumeName == "" {
		delayBinding, err := c.shouldDelayBinding(claim)
		if err != nil {
			return err
		}
		volume, err := c.findBestMatch(claim, delayBinding)
		if err != nil {
			c.recorder.Event(claim, corev1.EventTypeWarning, EventFailedBinding, err.Error())
			_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
			return err
		}
		if volume != nil {
			logger.V(4).Info("Binding claim to volume", "PVC", klog.KObj(claim), "volume", volume.Name)
			return c.bind(ctx, volume, claim)
		}
		if updated, err := c.assignDefaultStorageClass(ctx, claim); err != nil || updated {
			// The update brings the claim back with its class.
			return err
		}
		switch {
		case delayBinding && !volumeutil.IsDelayBindingProvisioning(claim):
			c.eventForUnboundDelayBindingClaim(claim)
		case volumeutil.GetPersistentVolumeClaimClass(claim) != "":
			return c.provisionClaim(ctx, claim)
		default:
			c.recorder.Event(claim, corev1.EventTypeNormal, EventFailedBinding, "no persistent volumes available for this claim and no storage class is set")
		}
		_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err
	}

	// The user asked for a volume by name.
	volume, err := c.volumeLister.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Claim requests a volume that does not exist", "PVC", klog.KObj(claim), "volume", claim.Spec.VolumeName)
		_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err
	}
	if err != nil {
		return err
	}
	switch {
	case volume.Spec.ClaimRef == nil:
		if err := checkVolumeSatisfyClaim(volume, claim); err != nil {
			c.recorder.Eventf(claim, corev1.EventTypeWarning, EventVolumeMismatch, "Cannot bind to requested volume %q: %s", volume.Name, err)
			_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
			return err
		}
		return c.bind(ctx, volume, claim)
	case volumeutil.IsVolumeBoundToClaim(volume, claim):
		return c.bind(ctx, volume, claim)
	default:
		if !metav1.HasAnnotation(claim.ObjectMeta, volumeutil.AnnBoundByController) {
			c.recorder.Eventf(claim, corev1.EventTypeWarning, EventFailedBinding, "volume %q already bound to a different claim.", volume.Name)
			_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
			return err
		}
		return fmt.Errorf("claim %s/%s was bound by the controller to volume %q which is bound to another claim", claim.Namespace, claim.Name, volume.Name)
	}
}

func (c *Controller) syncBoundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		return c.claimLost(ctx, claim, EventClaimLost, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
	}
	volume, err := c.volumeLister.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return c.claimLost(ctx, claim, EventClaimLost, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	}
	if err != nil {
		return err
	}
	if volume.Spec.ClaimRef == nil || volumeutil.IsVolumeBoundToClaim(volume, claim) {
		// The volume lost its claimRef (a restore, a user's edit) or is ours:
		// make sure both sides say so.
		return c.bind(ctx, volume, claim)
	}
	return c.claimLost(ctx, claim, EventClaimMisbound, "Two claims are bound to the same volume, this one is bound incorrectly")
}

func (c *Controller) claimLost(ctx context.Context, claim *corev1.PersistentVolumeClaim, reason, message string) error {
	if claim.Status.Phase != corev1.ClaimLost {
		c.recorder.Event(claim, corev1.EventTypeWarning, reason, message)
	}
	_, err := c.updateClaimStatus(ctx, claim, corev1.ClaimLost, nil)
	return err
}

// shouldDelayBinding: the claim's class binds on first consumer and the
// scheduler has not chosen a node for it yet.
func (c *Controller) shouldDelayBinding(claim *corev1.PersistentVolumeClaim) (bool, error) {
	if volumeutil.IsDelayBindingProvisioning(claim) {
		return false, nil
	}
	delay, err := volumeutil.IsDelayBindingMode(claim, c.classLister)
	if err != nil && apierrors.IsNotFound(err) {
		return false, nil
	}
	return delay, err
}

// findBestMatch is upstream's findBestMatchForClaim: volumes grouped by
// their access modes, the groups with the fewest modes first, the smallest
// fitting volume of the first group that has one.
func (c *Controller) findBestMatch(claim *corev1.PersistentVolumeClaim, delayBinding bool) (*corev1.PersistentVolume, error) {
	all, err := c.volumeLister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	groups := map[int][]*corev1.PersistentVolume{}
	for _, v := range all {
		if volumeutil.CheckAccessModes(claim, v) {
			groups[len(v.Spec.AccessModes)] = append(groups[len(v.Spec.AccessModes)], v)
		}
	}
	sizes := make([]int, 0, len(groups))
	for n := range groups {
		sizes = append(sizes, n)
	}
	sort.Ints(sizes)
	for _, n := range sizes {
		vols := groups[n]
		sort.Slice(vols, func(i, j int) bool {
			qi, qj := vols[i].Spec.Capacity[corev1.ResourceStorage], vols[j].Spec.Capacity[corev1.ResourceStorage]
			if cmp := qi.Cmp(qj); cmp != 0 {
				return cmp < 0
			}
			return vols[i].Name < vols[j].Name
		})
		v, err := volumeutil.FindMatchingVolume(claim, vols, nil, nil, delayBinding, false)
		if err != nil {
			return nil, err
		}
		if v != nil {
			return v, nil
		}
	}
	return nil, nil
}

// checkVolumeSatisfyClaim is upstream's check of a volume the claim named.
func checkVolumeSatisfyClaim(volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := volume.Spec.Capacity[corev1.ResourceStorage]
	if requested.Cmp(capacity) > 0 {
		return fmt.Errorf("requested PV is too small")
	}
	if volumeutil.GetPersistentVolumeClass(volume) != volumeutil.GetPersistentVolumeClaimClass(claim) {
		return fmt.Errorf("storageClassName does not match")
	}
	if volumeutil.CheckVolumeModeMismatches(&claim.Spec, &volume.Spec) {
		return fmt.Errorf("incompatible volumeMode")
	}
	if !volumeutil.CheckAccessModes(claim, volume) {
		return fmt.Errorf("incompatible accessMode")
	}
	return nil
}

// assignDefaultStorageClass gives a claim created without a class (nil,
// not "") the default class, as upstream's retroactive default does.
func (c *Controller) assignDefaultStorageClass(ctx context.Context, claim *corev1.PersistentVolumeClaim) (bool, error) {
	if volumeutil.PersistentVolumeClaimHasClass(claim) {
		return false, nil
	}
	class, err := DefaultStorageClass(c.classLister)
	if err != nil || class == nil {
		return false, err
	}
	clone := claim.DeepCopy()
	clone.Spec.StorageClassName = &class.Name
	_, err = c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return false, err
	}
	klog.FromContext(ctx).V(4).Info("Assigned the default StorageClass", "PVC", klog.KObj(claim), "class", class.Name)
	return true, nil
}

// DefaultStorageClass returns the default StorageClass: of several, the
// newest (then the first by name), as upstream's admission picks it.
func DefaultStorageClass(lister interface {
	List(labels.Selector) ([]*storagev1.StorageClass, error)
}) (*storagev1.StorageClass, error) {
	classes, err := lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var best *storagev1.StorageClass
	for _, sc := range classes {
		if sc.Annotations[annDefaultClass] != "true" && sc.Annotations[annBetaDefaultClass] != "true" {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name) {
			best = sc
		}
	}
	return best, nil
}

func (c *Controller) eventForUnboundDelayBindingClaim(claim *corev1.PersistentVolumeClaim) {
	reason, message := EventWaitForFirstConsumer, "waiting for first consumer to be created before binding"
	var names []string
	pods, err := c.podLister.Pods(claim.Namespace).List(labels.Everything())
	if err == nil {
		for _, pod := range pods {
			if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
				continue
			}
			if slices.Contains(ClaimNames(pod), claim.Name) {
				names = append(names, pod.Name)
			}
		}
	}
	sort.Strings(names)
	switch len(names) {
	case 0:
	case 1:
		reason, message = EventWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", names[0])
	default:
		reason, message = EventWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(names, ","))
	}
	c.recorder.Event(claim, corev1.EventTypeNormal, reason, message)
}

// ClaimNames returns the names of the claims a pod's volumes use (its
// persistentVolumeClaim volumes and the claims of its ephemeral volumes).
func ClaimNames(pod *corev1.Pod) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, pod.Name+"-"+v.Name)
		}
	}
	return out
}

// provisionClaim hands the claim to its class's provisioner: skiff has no
// in-tree provisioners, so every provisioner is external and acts on the
// storage-provisioner annotations.
func (c *Controller) provisionClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	className := volumeutil.GetPersistentVolumeClaimClass(claim)
	class, err := c.classLister.Get(className)
	if apierrors.IsNotFound(err) {
		c.recorder.Eventf(claim, corev1.EventTypeWarning, EventProvisioningFailed, "storageclass.storage.k8s.io %q not found", className)
		_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err
	}
	if err != nil {
		return err
	}
	if class.Provisioner == volumeutil.NotSupportedProvisioner || strings.HasPrefix(class.Provisioner, "kubernetes.io/") {
		c.recorder.Eventf(claim, corev1.EventTypeWarning, EventProvisioningFailed, "no volume plugin matched name: %s", class.Provisioner)
		_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err
	}
	if claim.Annotations[volumeutil.AnnStorageProvisioner] != class.Provisioner ||
		claim.Annotations[volumeutil.AnnBetaStorageProvisioner] != class.Provisioner {
		clone := claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnStorageProvisioner, class.Provisioner)
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnBetaStorageProvisioner, class.Provisioner)
		updated, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		claim = updated
		c.recorder.Eventf(claim, corev1.EventTypeNormal, EventExternalProvisioning,
			"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
			class.Provisioner)
	}
	_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
	return err
}

// bind binds volume and claim both ways and sets both phases to Bound;
// each step writes only what is not so yet.
func (c *Controller) bind(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	bound, dirty, err := volumeutil.GetBindVolumeToClaim(volume, claim)
	if err != nil {
		return err
	}
	if dirty {
		if bound, err = c.client.CoreV1().PersistentVolumes().Update(ctx, bound, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if bound, err = c.updateVolumePhase(ctx, bound, corev1.VolumeBound); err != nil {
		return err
	}
	clone := claim.DeepCopy()
	dirty = false
	if clone.Spec.VolumeName != bound.Name {
		clone.Spec.VolumeName = bound.Name
		dirty = true
	}
	if !metav1.HasAnnotation(clone.ObjectMeta, volumeutil.AnnBoundByController) && claim.Spec.VolumeName == "" {
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnBoundByController, "yes")
		dirty = true
	}
	if !metav1.HasAnnotation(clone.ObjectMeta, volumeutil.AnnBindCompleted) {
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnBindCompleted, "yes")
		dirty = true
	}
	if dirty {
		if claim, err = c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimBound, bound)
	return err
}

// updateClaimStatus writes the phase (and, when bound, the volume's access
// modes and capacity) if they changed.
func (c *Controller) updateClaimStatus(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase,
	volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	clone.Status.Phase = phase
	if volume == nil {
		if phase != corev1.ClaimBound && phase != corev1.ClaimLost {
			clone.Status.AccessModes, clone.Status.Capacity = nil, nil
		}
	} else {
		clone.Status.AccessModes = volume.Spec.AccessModes
		if q, ok := volume.Spec.Capacity[corev1.ResourceStorage]; ok {
			clone.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
		}
	}
	if equalClaimStatus(&claim.Status, &clone.Status) {
		return claim, nil
	}
	return c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).UpdateStatus(ctx, clone, metav1.UpdateOptions{})
}

func equalClaimStatus(a, b *corev1.PersistentVolumeClaimStatus) bool {
	if a.Phase != b.Phase || !slices.Equal(a.AccessModes, b.AccessModes) || len(a.Capacity) != len(b.Capacity) {
		return false
	}
	for k, q := range a.Capacity {
		if o, ok := b.Capacity[k]; !ok || o.Cmp(q) != 0 {
			return false
		}
	}
	return true
}

// ---- volumes

func (c *Controller) syncVolumeKey(ctx context.Context, name string) error {
	volume, err := c.volumeLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.syncVolume(ctx, volume)
}

func (c *Controller) syncVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	ref := volume.Spec.ClaimRef
	if ref == nil {
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeAvailable)
		return err
	}
	claim, err := c.claimLister.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if apierrors.IsNotFound(err) {
		claim = nil
	}
	if ref.UID == "" {
		// Pre-bound by name to a claim that is not bound yet: the claim's
		// sync binds it.
		if claim != nil {
			c.queue.Add(claimKeyPrefix + claim.Namespace + "/" + claim.Name)
		}
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeAvailable)
		return err
	}
	if claim != nil && claim.UID != ref.UID {
		// The claim was deleted and another made with its name.
		claim = nil
	}
	if claim == nil {
		if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
			if volume, err = c.updateVolumePhase(ctx, volume, corev1.VolumeReleased); err != nil {
				return err
			}
		}
		return c.reclaimVolume(ctx, volume)
	}
	switch claim.Spec.VolumeName {
	case "":
		// Binding in progress (the claim's side is written second).
		if volume.Status.Phase == corev1.VolumeBound || metav1.HasAnnotation(volume.ObjectMeta, volumeutil.AnnBoundByController) {
			c.queue.Add(claimKeyPrefix + claim.Namespace + "/" + claim.Name)
			return nil
		}
		c.queue.Add(claimKeyPrefix + claim.Namespace + "/" + claim.Name)
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeAvailable)
		return err
	case volume.Name:
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeBound)
		return err
	}
	// The claim is bound to another volume.
	if metav1.HasAnnotation(volume.ObjectMeta, volumeutil.AnnDynamicallyProvisioned) &&
		volume.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
		// Provisioned for this claim, which got another volume: not needed.
		if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
			if volume, err = c.updateVolumePhase(ctx, volume, corev1.VolumeReleased); err != nil {
				return err
			}
		}
		return c.reclaimVolume(ctx, volume)
	}
	if metav1.HasAnnotation(volume.ObjectMeta, volumeutil.AnnBoundByController) {
		// We chose this volume and the claim was fulfilled by another: undo.
		clone := volume.DeepCopy()
		clone.Spec.ClaimRef = nil
		delete(clone.Annotations, volumeutil.AnnBoundByController)
		updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		_, err = c.updateVolumePhase(ctx, updated, corev1.VolumeAvailable)
		return err
	}
	// Pre-bound by the user to a claim bound elsewhere: the user's business.
	return nil
}

// reclaimVolume applies a Released volume's reclaim policy.
func (c *Controller) reclaimVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	if volume.Status.Phase == corev1.VolumeFailed {
		return nil
	}
	switch volume.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimRetain, "":
		klog.FromContext(ctx).V(4).Info("Volume released, policy is Retain", "volume", volume.Name)
		return nil
	case corev1.PersistentVolumeReclaimDelete:
		provisioner := volume.Annotations[volumeutil.AnnDynamicallyProvisioned]
		if provisioner != "" && !strings.HasPrefix(provisioner, "kubernetes.io/") {
			// The external provisioner that made it deletes it.
			klog.FromContext(ctx).V(4).Info("Volume deletion delegated to its provisioner", "volume", volume.Name, "provisioner", provisioner)
			return nil
		}
		return c.failVolume(ctx, volume, EventVolumeFailedDelete,
			fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", volume.Name))
	case corev1.PersistentVolumeReclaimRecycle:
		return c.failVolume(ctx, volume, EventVolumeFailedRecycle, "No recycler plugin found for the volume!")
	default:
		return c.failVolume(ctx, volume, EventVolumeUnknownReclaim, "Volume has unrecognized PersistentVolumeReclaimPolicy")
	}
}

func (c *Controller) failVolume(ctx context.Context, volume *corev1.PersistentVolume, reason, message string) error {
	c.recorder.Event(volume, corev1.EventTypeWarning, reason, message)
	clone := volume.DeepCopy()
	clone.Status.Phase = corev1.VolumeFailed
	clone.Status.Message = message
	_, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	return err
}

func (c *Controller) updateVolumePhase(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	clone := volume.DeepCopy()
	clone.Status.Phase = phase
	clone.Status.Message = ""
	now := metav1.Now()
	clone.Status.LastPhaseTransitionTime = &now
	return c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, clone, metav1.UpdateOptions{})
}
