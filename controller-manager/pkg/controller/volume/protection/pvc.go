package protection

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// The finalizers, as upstream names them.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// PVCControllerName names the claim protection controller, as upstream's.
const PVCControllerName = "persistentvolumeclaim-protection-controller"

// PVCController keeps kubernetes.io/pvc-protection on claims in use.
type PVCController struct {
	client    kubernetes.Interface
	metrics   *metrics.Metrics
	pvcLister corelisters.PersistentVolumeClaimLister
	podLister corelisters.PodLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
}

// NewPVCController builds the controller and registers its handlers.
func NewPVCController(client kubernetes.Interface, pvcs coreinformers.PersistentVolumeClaimInformer, pods coreinformers.PodInformer,
	m *metrics.Metrics) (*PVCController, error) {
	c := &PVCController{
		client:    client,
		metrics:   m,
		pvcLister: pvcs.Lister(),
		podLister: pods.Lister(),
		synced:    []cache.InformerSynced{pvcs.Informer().HasSynced, pods.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "pvcprotection")),
	}
	if _, err := pvcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimEvent,
		UpdateFunc: func(_, cur any) { c.claimEvent(cur) },
	}); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podEvent,
		UpdateFunc: func(_, cur any) { c.podEvent(cur) },
		DeleteFunc: c.podEvent,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the caches, then runs workers until ctx is done.
func (c *PVCController) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: PVCControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *PVCController) claimEvent(obj any) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	if needToAdd(&pvc.ObjectMeta, PVCProtectionFinalizer) || needToRemove(&pvc.ObjectMeta, PVCProtectionFinalizer) {
		c.queue.Add(pvc.Namespace + "/" + pvc.Name)
	}
}

// podEvent queues the claims of a pod that went away or finished: they
// may be free now.
func (c *PVCController) podEvent(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("unexpected object %T", obj))
		return
	}
	for _, name := range claimNames(pod) {
		c.queue.Add(pod.Namespace + "/" + name)
	}
}

func (c *PVCController) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := c.pvcLister.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	if needToAdd(&pvc.ObjectMeta, PVCProtectionFinalizer) {
		clone := pvc.DeepCopy()
		clone.Finalizers = append(clone.Finalizers, PVCProtectionFinalizer)
		_, err := c.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, clone, metav1.UpdateOptions{})
		return err
	}
	if !needToRemove(&pvc.ObjectMeta, PVCProtectionFinalizer) {
		return nil
	}
	inUse, err := c.inUse(ctx, pvc)
	if err != nil || inUse != "" {
		if inUse != "" {
			logger.V(4).Info("Keeping the protection finalizer: claim in use", "PVC", klog.KObj(pvc), "pod", inUse)
		}
		return err
	}
	clone := pvc.DeepCopy()
	clone.Finalizers = slices.DeleteFunc(clone.Finalizers, func(f string) bool { return f == PVCProtectionFinalizer })
	_, err = c.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, clone, metav1.UpdateOptions{})
	if err == nil {
		logger.V(3).Info("Removed the protection finalizer from an unused claim", "PVC", klog.KObj(pvc))
	}
	return err
}

// inUse returns the name of a pod that uses the claim, from the cache and,
// when the cache has none, from a live list (upstream's askAPIServer: a pod
// created a moment ago may not be in the cache yet).
func (c *PVCController) inUse(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (string, error) {
	pods, err := c.podLister.Pods(pvc.Namespace).List(labels.Everything())
	if err != nil {
		return "", err
	}
	for _, pod := range pods {
		if podUsesClaim(pod, pvc) {
			return pod.Name, nil
		}
	}
	list, err := c.client.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for i := range list.Items {
		if podUsesClaim(&list.Items[i], pvc) {
			return list.Items[i].Name, nil
		}
	}
	return "", nil
}

// podUsesClaim: a scheduled pod that has not finished, mounting the claim
// directly or as its own ephemeral volume's claim.
func podUsesClaim(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if v.Ephemeral != nil && ephemeral.VolumeClaimName(pod, v) == pvc.Name && ephemeral.VolumeIsForPod(pod, pvc) == nil {
			return true
		}
	}
	return false
}

func claimNames(pod *corev1.Pod) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, ephemeral.VolumeClaimName(pod, v))
		}
	}
	return out
}

func needToAdd(m *metav1.ObjectMeta, finalizer string) bool {
	return m.DeletionTimestamp == nil && !slices.Contains(m.Finalizers, finalizer)
}

func needToRemove(m *metav1.ObjectMeta, finalizer string) bool {
	return m.DeletionTimestamp != nil && slices.Contains(m.Finalizers, finalizer)
}
