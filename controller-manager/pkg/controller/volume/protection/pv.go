package protection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// PVControllerName names the volume protection controller, as upstream's.
const PVControllerName = "persistentvolume-protection-controller"

// PVController keeps kubernetes.io/pv-protection on Bound volumes.
type PVController struct {
	client   kubernetes.Interface
	metrics  *metrics.Metrics
	pvLister corelisters.PersistentVolumeLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
}

// NewPVController builds the controller and registers its handler.
func NewPVController(client kubernetes.Interface, pvs coreinformers.PersistentVolumeInformer, m *metrics.Metrics) (*PVController, error) {
	c := &PVController{
		client:   client,
		metrics:  m,
		pvLister: pvs.Lister(),
		synced:   []cache.InformerSynced{pvs.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "pvprotection")),
	}
	handle := func(obj any) {
		pv, ok := obj.(*corev1.PersistentVolume)
		if ok && (needToAdd(&pv.ObjectMeta, PVProtectionFinalizer) || needToRemove(&pv.ObjectMeta, PVProtectionFinalizer)) {
			c.queue.Add(pv.Name)
		}
	}
	if _, err := pvs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, cur any) { handle(cur) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the cache, then runs workers until ctx is done.
func (c *PVController) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: PVControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *PVController) sync(ctx context.Context, name string) error {
	pv, err := c.pvLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case needToAdd(&pv.ObjectMeta, PVProtectionFinalizer):
		clone := pv.DeepCopy()
		clone.Finalizers = append(clone.Finalizers, PVProtectionFinalizer)
		_, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{})
		return err
	case needToRemove(&pv.ObjectMeta, PVProtectionFinalizer) && pv.Status.Phase != corev1.VolumeBound:
		// Upstream's test: a volume is in use while it is Bound (the binder
		// moves it to Released once its claim is gone).
		clone := pv.DeepCopy()
		clone.Finalizers = slices.DeleteFunc(clone.Finalizers, func(f string) bool { return f == PVProtectionFinalizer })
		_, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{})
		if err == nil {
			klog.FromContext(ctx).V(3).Info("Removed the protection finalizer from an unused volume", "volume", pv.Name)
		}
		return err
	}
	return nil
}
