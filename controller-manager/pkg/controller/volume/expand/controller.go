package expand

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	volumeutil "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events, as
// upstream's.
const ControllerName = "volume_expand"

// LocalPathProvisioner is the provisioner whose volumes this controller
// grows itself.
const LocalPathProvisioner = "skiff.dev/local-path"

const annStorageResizer = "volume.kubernetes.io/storage-resizer"

// Controller expands bound claims.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	pvcs     corelisters.PersistentVolumeClaimLister
	pvs      corelisters.PersistentVolumeLister
	classes  storagelisters.StorageClassLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
}

// NewController builds the controller and registers its handlers.
func NewController(client kubernetes.Interface, pvcs coreinformers.PersistentVolumeClaimInformer, pvs coreinformers.PersistentVolumeInformer,
	classes storageinformers.StorageClassInformer, recorder record.EventRecorder, m *metrics.Metrics) (*Controller, error) {
	c := &Controller{
		client: client, recorder: recorder, metrics: m,
		pvcs: pvcs.Lister(), pvs: pvs.Lister(), classes: classes.Lister(),
		synced: []cache.InformerSynced{pvcs.Informer().HasSynced, pvs.Informer().HasSynced, classes.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "volume_expand")),
	}
	if _, err := pvcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj any) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok || !needsResize(pvc) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(pvc)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// needsResize: bound, and asking for more than it has.
func needsResize(pvc *corev1.PersistentVolumeClaim) bool {
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" || pvc.DeletionTimestamp != nil {
		return false
	}
	request, capacity := pvc.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Status.Capacity[corev1.ResourceStorage]
	return request.Cmp(capacity) > 0
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := c.pvcs.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !needsResize(pvc) {
		return nil
	}
	pv, err := c.pvs.Get(pvc.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return nil // the binder marks the claim Lost
	}
	if err != nil {
		return err
	}
	provisioner := pv.Annotations[volumeutil.AnnDynamicallyProvisioned]
	if provisioner == "" {
		if class, err := c.classes.Get(volumeutil.GetPersistentVolumeClaimClass(pvc)); err == nil {
			provisioner = class.Provisioner
		}
	}
	request := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if provisioner != LocalPathProvisioner {
		if provisioner == "" || pvc.Annotations[annStorageResizer] == provisioner {
			return nil
		}
		clone := pvc.DeepCopy()
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, annStorageResizer, provisioner)
		if _, err := c.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
			return err
		}
		c.recorder.Event(pvc, corev1.EventTypeNormal, "ExternalExpanding", "waiting for an external controller to expand this PVC")
		return nil
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.Cmp(request) < 0 {
		c.recorder.Eventf(pvc, corev1.EventTypeNormal, "Resizing", "External resizer is resizing volume %s", pv.Name)
		clone := pv.DeepCopy()
		clone.Spec.Capacity[corev1.ResourceStorage] = request
		if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
			c.recorder.Event(pvc, corev1.EventTypeWarning, "VolumeResizeFailed", fmt.Sprintf("resize volume %q: %v", pv.Name, err))
			return err
		}
	}
	clone := pvc.DeepCopy()
	clone.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: request}
	clone.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: request}
	clone.Status.Conditions = nil
	if _, err := c.client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Expanded a local-path volume", "PVC", klog.KObj(pvc), "volume", pv.Name, "size", request.String())
	c.recorder.Event(pvc, corev1.EventTypeNormal, "VolumeResizeSuccessful", "Resize volume succeeded")
	return nil
}
