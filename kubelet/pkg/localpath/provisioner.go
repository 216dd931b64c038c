package localpath

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// ProvisionerName is the StorageClass provisioner this package serves.
const ProvisionerName = "skiff.dev/local-path"

// DefaultDir is where volumes live unless --local-path-dir says otherwise.
const DefaultDir = "/var/lib/skiff/storage"

// annNode records on a volume the node whose directory it is.
const annNode = "skiff.dev/local-path-node"

// Upstream's annotations (k8s.io/component-helpers/storage/volume).
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annSelectedNode           = "volume.kubernetes.io/selected-node"
	annDynamicallyProvisioned = "pv.kubernetes.io/provisioned-by"
)

// className is the claim's class, from spec or the beta annotation.
func className(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	return ptr.Deref(pvc.Spec.StorageClassName, "")
}

const (
	claimPrefix  = "claim:"
	volumePrefix = "volume:"
)

// Options configure a Provisioner.
type Options struct {
	NodeName string
	// Dir holds the volumes' directories.
	Dir      string
	Client   kubernetes.Interface
	Claims   coreinformers.PersistentVolumeClaimInformer
	Volumes  coreinformers.PersistentVolumeInformer
	Recorder record.EventRecorder
}

// Provisioner makes and deletes the local-path volumes of one node.
type Provisioner struct {
	node, dir string
	client    kubernetes.Interface
	recorder  record.EventRecorder
	claims    corelisters.PersistentVolumeClaimLister
	volumes   corelisters.PersistentVolumeLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New builds a provisioner and registers its informer handlers.
func New(o Options) (*Provisioner, error) {
	if o.NodeName == "" || o.Dir == "" {
		return nil, errors.New("local-path provisioner: node name and directory are required")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	p := &Provisioner{
		node: o.NodeName, dir: dir, client: o.Client, recorder: o.Recorder,
		claims: o.Claims.Lister(), volumes: o.Volumes.Lister(),
		synced: []cache.InformerSynced{o.Claims.Informer().HasSynced, o.Volumes.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "local-path"}),
	}
	if _, err := o.Claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.claimEvent,
		UpdateFunc: func(_, cur any) { p.claimEvent(cur) },
	}); err != nil {
		return nil, err
	}
	if _, err := o.Volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.volumeEvent,
		UpdateFunc: func(_, cur any) { p.volumeEvent(cur) },
	}); err != nil {
		return nil, err
	}
	return p, nil
}

// Start runs the provisioner until ctx ends.
func (p *Provisioner) Start(ctx context.Context) error {
	defer p.queue.ShutDown()
	logger := klog.FromContext(ctx).WithName("local-path")
	ctx = klog.NewContext(ctx, logger)
	if !cache.WaitForNamedCacheSync("local-path", ctx.Done(), p.synced...) {
		return nil
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for p.processNext(ctx) {
		}
	}, 0)
	<-ctx.Done()
	return nil
}

func (p *Provisioner) processNext(ctx context.Context) bool {
	key, quit := p.queue.Get()
	if quit {
		return false
	}
	defer p.queue.Done(key)
	if err := p.sync(ctx, key); err != nil {
		klog.FromContext(ctx).Error(err, "Sync failed, will retry", "key", key)
		p.queue.AddRateLimited(key)
		return true
	}
	p.queue.Forget(key)
	return true
}

// ours: a claim handed to this provisioner for this node, not yet bound.
func (p *Provisioner) ours(pvc *corev1.PersistentVolumeClaim) bool {
	prov := pvc.Annotations[annStorageProvisioner]
	if prov == "" {
		prov = pvc.Annotations[annBetaStorageProvisioner]
	}
	return prov == ProvisionerName && pvc.Annotations[annSelectedNode] == p.node &&
		pvc.Spec.VolumeName == "" && pvc.DeletionTimestamp == nil
}

func (p *Provisioner) claimEvent(obj any) {
	if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok && p.ours(pvc) {
		p.queue.Add(claimPrefix + pvc.Namespace + "/" + pvc.Name)
	}
}

func (p *Provisioner) volumeEvent(obj any) {
	if pv, ok := obj.(*corev1.PersistentVolume); ok && pv.Annotations[annNode] == p.node &&
		pv.Annotations[annDynamicallyProvisioned] == ProvisionerName {
		p.queue.Add(volumePrefix + pv.Name)
	}
}

func (p *Provisioner) sync(ctx context.Context, key string) error {
	if name, ok := strings.CutPrefix(key, volumePrefix); ok {
		pv, err := p.volumes.Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return p.reclaim(ctx, pv)
	}
	ns, name, err := cache.SplitMetaNamespaceKey(strings.TrimPrefix(key, claimPrefix))
	if err != nil {
		return nil
	}
	pvc, err := p.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !p.ours(pvc) {
		return nil
	}
	return p.provision(ctx, pvc)
}

// VolumeName is the volume made for a claim, as the external-provisioner
// names it.
func VolumeName(pvc *corev1.PersistentVolumeClaim) string { return "pvc-" + string(pvc.UID) }

// Path is the directory of a claim's volume under dir.
func Path(dir string, pvc *corev1.PersistentVolumeClaim) string {
	return filepath.Join(dir, fmt.Sprintf("%s_%s_%s", VolumeName(pvc), pvc.Namespace, pvc.Name))
}

func (p *Provisioner) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	name := VolumeName(pvc)
	if _, err := p.volumes.Get(name); err == nil {
		return nil // made; the binder binds it
	}
	if pvc.Spec.VolumeMode != nil && *pvc.Spec.VolumeMode == corev1.PersistentVolumeBlock {
		p.recorder.Event(pvc, corev1.EventTypeWarning, "ProvisioningFailed",
			fmt.Sprintf("failed to provision volume with StorageClass %q: local-path supports volumeMode Filesystem only", className(pvc)))
		return nil
	}
	for _, m := range pvc.Spec.AccessModes {
		if m != corev1.ReadWriteOnce && m != corev1.ReadWriteOncePod {
			p.recorder.Event(pvc, corev1.EventTypeWarning, "ProvisioningFailed",
				fmt.Sprintf("failed to provision volume with StorageClass %q: local-path supports access modes ReadWriteOnce and ReadWriteOncePod only, not %s",
					className(pvc), m))
			return nil
		}
	}
	class, err := p.client.StorageV1().StorageClasses().Get(ctx, className(pvc), metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			p.recorder.Event(pvc, corev1.EventTypeWarning, "ProvisioningFailed", fmt.Sprintf("storageclass.storage.k8s.io %q not found", className(pvc)))
			return nil
		}
		return err
	}
	p.recorder.Event(pvc, corev1.EventTypeNormal, "Provisioning",
		fmt.Sprintf("External provisioner is provisioning volume for claim %q", pvc.Namespace+"/"+pvc.Name))
	path := Path(p.dir, pvc)
	if err := os.MkdirAll(path, 0o777); err == nil {
		err = os.Chmod(path, 0o777)
	} else {
		p.recorder.Event(pvc, corev1.EventTypeWarning, "ProvisioningFailed", fmt.Sprintf("failed to provision volume with StorageClass %q: %v", class.Name, err))
		return err
	}
	capacity := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				annDynamicallyProvisioned: ProvisionerName,
				annNode:                   p.node,
			},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: capacity},
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: ptr.Deref(class.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
			MountOptions:                  class.MountOptions,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion},
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{p.node}}},
			}}}},
		},
	}
	if _, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		p.recorder.Event(pvc, corev1.EventTypeWarning, "ProvisioningFailed", fmt.Sprintf("failed to provision volume with StorageClass %q: %v", class.Name, err))
		return err
	}
	klog.FromContext(ctx).V(2).Info("Provisioned a local-path volume", "PVC", klog.KObj(pvc), "volume", name, "path", path)
	p.recorder.Event(pvc, corev1.EventTypeNormal, "ProvisioningSucceeded", fmt.Sprintf("Successfully provisioned volume %s", name))
	return nil
}

// reclaim removes the directory and the volume of a Released volume whose
// policy is Delete.
func (p *Provisioner) reclaim(ctx context.Context, pv *corev1.PersistentVolume) error {
	if pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		pv.DeletionTimestamp != nil {
		return nil
	}
	if pv.Spec.Local == nil {
		return nil
	}
	path := filepath.Clean(pv.Spec.Local.Path)
	if filepath.Dir(path) != p.dir {
		// Not a directory this provisioner made (the volume was edited, or
		// --local-path-dir changed): its data is left alone.
		p.recorder.Event(pv, corev1.EventTypeWarning, "VolumeFailedDelete",
			fmt.Sprintf("%s is not a directory of %s: not deleted", path, p.dir))
		return nil
	}
	if err := os.RemoveAll(path); err != nil {
		p.recorder.Event(pv, corev1.EventTypeWarning, "VolumeFailedDelete", err.Error())
		return err
	}
	err := p.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &pv.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Deleted a local-path volume", "volume", pv.Name, "path", path)
	return nil
}
