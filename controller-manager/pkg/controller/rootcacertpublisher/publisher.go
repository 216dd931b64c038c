package rootcacertpublisher

import (
	"context"
	"errors"
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

const (
	// ControllerName is the controller's name, as upstream names it.
	ControllerName = "root-ca-certificate-publisher-controller"
	// ConfigMapName is the name of the ConfigMap published in every namespace.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey is the ConfigMap key that holds the CA bundle.
	DataKey = "ca.crt"
	// DescriptionAnnotation and Description are upstream's annotation.
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Options configure the publisher.
type Options struct {
	// RootCA is the PEM bundle to publish (the cluster CA certificate).
	RootCA []byte
}

// Controller publishes the root CA ConfigMap.
type Controller struct {
	client   kubernetes.Interface
	rootCA   string
	nsLister corelisters.NamespaceLister
	cmLister corelisters.ConfigMapLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	metrics  *metrics.Metrics
}

// NewController builds the publisher. recorder is unused and may be nil.
func NewController(client kubernetes.Interface, nsInformer coreinformers.NamespaceInformer, cmInformer coreinformers.ConfigMapInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if len(opts.RootCA) == 0 {
		return nil, errors.New("root CA publisher: no CA bundle given")
	}
	c := &Controller{
		client:   client,
		rootCA:   string(opts.RootCA),
		nsLister: nsInformer.Lister(),
		cmLister: cmInformer.Lister(),
		synced:   []cache.InformerSynced{nsInformer.Informer().HasSynced, cmInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "root_ca_cert_publisher")),
		metrics: m,
	}
	if _, err := cmInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.enqueueConfigMap(obj) },
		DeleteFunc: c.enqueueConfigMap,
	}); err != nil {
		return nil, err
	}
	if _, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if ns, ok := obj.(*corev1.Namespace); ok {
				c.queue.Add(ns.Name)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			// A namespace leaving the Terminating phase is the only update
			// that matters; resyncs re-check everything.
			if ns, ok := newObj.(*corev1.Namespace); ok {
				c.queue.Add(ns.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueueConfigMap(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == ConfigMapName {
		c.queue.Add(cm.Namespace)
	}
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

// sync makes the namespace's ConfigMap what it should be.
func (c *Controller) sync(ctx context.Context, ns string) error {
	namespace, err := c.nsLister.Get(ns)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if namespace.DeletionTimestamp != nil {
		return nil
	}
	cm, err := c.cmLister.ConfigMaps(ns).Get(ConfigMapName)
	if apierrors.IsNotFound(err) {
		_, err = c.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data:       map[string]string{DataKey: c.rootCA},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("creating %s/%s: %w", ns, ConfigMapName, err)
		}
		klog.FromContext(ctx).V(2).Info("Published the root CA", "configMap", klog.KRef(ns, ConfigMapName))
		return nil
	}
	if err != nil {
		return err
	}
	if len(cm.Data) == 1 && cm.Data[DataKey] == c.rootCA && len(cm.BinaryData) == 0 && cm.Annotations[DescriptionAnnotation] == Description {
		return nil
	}
	fixed := cm.DeepCopy()
	fixed.Data = map[string]string{DataKey: c.rootCA}
	fixed.BinaryData = nil
	if fixed.Annotations == nil {
		fixed.Annotations = map[string]string{}
	}
	fixed.Annotations[DescriptionAnnotation] = Description
	if _, err := c.client.CoreV1().ConfigMaps(ns).Update(ctx, fixed, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating %s/%s: %w", ns, ConfigMapName, err)
	}
	return nil
}
