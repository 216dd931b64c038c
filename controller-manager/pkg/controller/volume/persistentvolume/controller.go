package persistentvolume

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events, as
// upstream's.
const ControllerName = "persistentvolume-controller"

// DefaultSyncPeriod is upstream's --pvclaimbinder-sync-period.
const DefaultSyncPeriod = 15 * time.Second

const (
	claimKeyPrefix  = "claim:"
	volumeKeyPrefix = "volume:"
)

// Options tune the controller; the zero value is upstream's behaviour.
type Options struct {
	// SyncPeriod is how often every claim and volume is synced again
	// without an event (0: DefaultSyncPeriod).
	SyncPeriod time.Duration
}

// Controller is the PersistentVolume binder.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	period   time.Duration

	volumeLister corelisters.PersistentVolumeLister
	claimLister  corelisters.PersistentVolumeClaimLister
	classLister  storagelisters.StorageClassLister
	podLister    corelisters.PodLister
	synced       []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// NewController builds the binder and registers its informer handlers.
// recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, volumes coreinformers.PersistentVolumeInformer,
	claims coreinformers.PersistentVolumeClaimInformer, classes storageinformers.StorageClassInformer,
	pods coreinformers.PodInformer, recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = DefaultSyncPeriod
	}
	c := &Controller{
		client:       client,
		recorder:     recorder,
		metrics:      m,
		period:       opts.SyncPeriod,
		volumeLister: volumes.Lister(),
		claimLister:  claims.Lister(),
		classLister:  classes.Lister(),
		podLister:    pods.Lister(),
		synced: []cache.InformerSynced{volumes.Informer().HasSynced, claims.Informer().HasSynced,
			classes.Informer().HasSynced, pods.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "volumes")),
	}
	if _, err := volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.volumeEvent,
		UpdateFunc: func(_, cur any) { c.volumeEvent(cur) },
		DeleteFunc: c.volumeEvent,
	}); err != nil {
		return nil, err
	}
	if _, err := claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimEvent,
		UpdateFunc: func(_, cur any) { c.claimEvent(cur) },
		DeleteFunc: c.claimEvent,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the informer caches, then runs workers (and the periodic
// resync) until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	go wait.UntilWithContext(ctx, func(context.Context) { c.resync() }, c.period)
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *Controller) resync() {
	vols, err := c.volumeLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, v := range vols {
		c.queue.Add(volumeKeyPrefix + v.Name)
	}
	claims, err := c.claimLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, pvc := range claims {
		c.queue.Add(claimKeyPrefix + pvc.Namespace + "/" + pvc.Name)
	}
}

func (c *Controller) volumeEvent(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(volumeKeyPrefix + key)
	// A volume's change (deleted, bound, released) may move its claim.
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if pv, ok := obj.(*corev1.PersistentVolume); ok && pv.Spec.ClaimRef != nil {
		c.queue.Add(claimKeyPrefix + pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name)
	}
}

func (c *Controller) claimEvent(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(claimKeyPrefix + key)
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok && pvc.Spec.VolumeName != "" {
		c.queue.Add(volumeKeyPrefix + pvc.Spec.VolumeName)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	switch {
	case strings.HasPrefix(key, claimKeyPrefix):
		ns, name, err := cache.SplitMetaNamespaceKey(strings.TrimPrefix(key, claimKeyPrefix))
		if err != nil {
			return nil
		}
		return c.syncClaimKey(ctx, ns, name)
	case strings.HasPrefix(key, volumeKeyPrefix):
		return c.syncVolumeKey(ctx, strings.TrimPrefix(key, volumeKeyPrefix))
	}
	utilruntime.HandleError(fmt.Errorf("unknown key %q", key))
	return nil
}
