package ephemeral

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events, as
// upstream's.
const ControllerName = "ephemeral_volume"

// Controller creates the claims of pods' generic ephemeral volumes.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	metrics   *metrics.Metrics
	podLister corelisters.PodLister
	pvcLister corelisters.PersistentVolumeClaimLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
}

// NewController builds the controller and registers its handlers.
func NewController(client kubernetes.Interface, pods coreinformers.PodInformer, pvcs coreinformers.PersistentVolumeClaimInformer,
	recorder record.EventRecorder, m *metrics.Metrics) (*Controller, error) {
	c := &Controller{
		client:    client,
		recorder:  recorder,
		metrics:   m,
		podLister: pods.Lister(),
		pvcLister: pvcs.Lister(),
		synced:    []cache.InformerSynced{pods.Informer().HasSynced, pvcs.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "ephemeral_volume")),
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podEvent,
		UpdateFunc: func(_, cur any) { c.podEvent(cur) },
	}); err != nil {
		return nil, err
	}
	// A claim deleted under a live pod is made again.
	if _, err := pvcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			pvc, ok := obj.(*corev1.PersistentVolumeClaim)
			if !ok {
				return
			}
			if ref := metav1.GetControllerOfNoCopy(pvc); ref != nil && ref.Kind == "Pod" && ref.APIVersion == "v1" {
				c.queue.Add(pvc.Namespace + "/" + ref.Name)
			}
		},
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

func (c *Controller) podEvent(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.DeletionTimestamp != nil || !hasEphemeral(pod) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(pod)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func hasEphemeral(pod *corev1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Ephemeral != nil {
			return true
		}
	}
	return false
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pod.DeletionTimestamp != nil {
		return nil
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := c.handleVolume(ctx, pod, vol); err != nil {
			c.recorder.Event(pod, corev1.EventTypeWarning, "FailedBinding", fmt.Sprintf("ephemeral volume %s: %v", vol.Name, err))
			return fmt.Errorf("pod %s: %w", key, err)
		}
	}
	return nil
}

func (c *Controller) handleVolume(ctx context.Context, pod *corev1.Pod, vol *corev1.Volume) error {
	if vol.Ephemeral == nil {
		return nil
	}
	if vol.Ephemeral.VolumeClaimTemplate == nil {
		return fmt.Errorf("no volumeClaimTemplate")
	}
	claimName := ephemeral.VolumeClaimName(pod, vol)
	pvc, err := c.pvcLister.PersistentVolumeClaims(pod.Namespace).Get(claimName)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil {
		// Already made (or someone else's, which VolumeIsForPod says).
		return ephemeral.VolumeIsForPod(pod, pvc)
	}
	tmpl := vol.Ephemeral.VolumeClaimTemplate
	pvc = &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: claimName,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
			Annotations: tmpl.Annotations,
			Labels:      tmpl.Labels,
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		// AlreadyExists: the cache is behind; the retry checks ownership.
		return fmt.Errorf("create PVC %s: %w", claimName, err)
	}
	klog.FromContext(ctx).V(2).Info("Created the claim of an ephemeral volume", "pod", klog.KObj(pod), "PVC", klog.KRef(pod.Namespace, claimName))
	return nil
}
