package serviceaccount

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the controller's name, as upstream's controller manager
// names it.
const ControllerName = "serviceaccount-controller"

// Options configure the controller.
type Options struct {
	// ServiceAccounts are the names every active namespace gets; empty
	// means upstream's default, ["default"].
	ServiceAccounts []string
}

// Controller ensures the service accounts exist.
type Controller struct {
	client   kubernetes.Interface
	names    []string
	nsLister corelisters.NamespaceLister
	saLister corelisters.ServiceAccountLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	metrics  *metrics.Metrics
}

// NewController builds the controller and registers its informer handlers.
// recorder is unused (upstream records no events here) and may be nil.
func NewController(client kubernetes.Interface, nsInformer coreinformers.NamespaceInformer, saInformer coreinformers.ServiceAccountInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	names := opts.ServiceAccounts
	if len(names) == 0 {
		names = []string{"default"}
	}
	c := &Controller{
		client:   client,
		names:    names,
		nsLister: nsInformer.Lister(),
		saLister: saInformer.Lister(),
		synced:   []cache.InformerSynced{nsInformer.Informer().HasSynced, saInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "serviceaccount")),
		metrics: m,
	}
	if _, err := saInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if sa := saOf(obj); sa != nil {
				c.queue.Add(sa.Namespace)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueNamespace(obj) },
		UpdateFunc: func(_, obj any) { c.enqueueNamespace(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func saOf(obj any) *corev1.ServiceAccount {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	sa, _ := obj.(*corev1.ServiceAccount)
	return sa
}

func (c *Controller) enqueueNamespace(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		c.queue.Add(ns.Name)
	}
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

// sync creates the missing service accounts of namespace ns.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.nsLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase != corev1.NamespaceActive && ns.Status.Phase != "" || ns.DeletionTimestamp != nil {
		return nil
	}
	for _, sa := range c.names {
		if _, err := c.saLister.ServiceAccounts(name).Get(sa); err == nil {
			continue
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		_, err := c.client.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		switch {
		case err == nil:
			klog.FromContext(ctx).V(2).Info("Created service account", "serviceAccount", klog.KRef(name, sa))
		case apierrors.IsAlreadyExists(err):
		case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// The namespace is going away; nothing to do.
		default:
			return fmt.Errorf("creating service account %s/%s: %w", name, sa, err)
		}
	}
	return nil
}
