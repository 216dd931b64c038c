package disruption

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events.
const ControllerName = "disruption-controller"

// StalePodControllerName names the loop that resets stale
// DisruptionTarget pod conditions, in logs and metrics.
const StalePodControllerName = "disruption-controller-stale-pod-disruption"

// DeletionTimeout is how long an evicted pod recorded in
// status.disruptedPods is expected to take to be deleted; past it the
// entry is dropped and the pod counts again (upstream's 2 minutes).
const DeletionTimeout = 2 * time.Minute

// Options tune the controller; the zero value is upstream's behaviour
// without the scale subresource.
type Options struct {
	// Scales and Mapper, when both set, find the scale of a pod's
	// controller of a kind the controller does not know (a custom
	// resource) through its scale subresource.
	Scales scale.ScalesGetter
	Mapper meta.RESTMapper
	// Clock times disruptedPods entries (nil: the real clock).
	Clock clock.Clock
}

// Controller is the disruption controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	clock    clock.Clock
	scales   scale.ScalesGetter
	mapper   meta.RESTMapper

	pdbLister policylisters.PodDisruptionBudgetLister
	podLister corelisters.PodLister
	rcLister  corelisters.ReplicationControllerLister
	rsLister  appslisters.ReplicaSetLister
	dLister   appslisters.DeploymentLister
	ssLister  appslisters.StatefulSetLister
	synced    []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
	// staleQueue holds pods whose DisruptionTarget condition may be stale.
	staleQueue workqueue.TypedRateLimitingInterface[string]
}

// NewController builds the controller on the factory's PodDisruptionBudget,
// pod, ReplicationController, ReplicaSet, Deployment and StatefulSet
// informers. recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, factory informers.SharedInformerFactory, recorder record.EventRecorder,
	m *metrics.Metrics, opts Options) (*Controller, error) {
	if (opts.Scales == nil) != (opts.Mapper == nil) {
		return nil, fmt.Errorf("disruption: Scales and Mapper go together")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	pdbs := factory.Policy().V1().PodDisruptionBudgets()
	pods := factory.Core().V1().Pods()
	rcs := factory.Core().V1().ReplicationControllers()
	rss := factory.Apps().V1().ReplicaSets()
	ds := factory.Apps().V1().Deployments()
	sss := factory.Apps().V1().StatefulSets()
	c := &Controller{
		client:    client,
		recorder:  recorder,
		metrics:   m,
		clock:     opts.Clock,
		scales:    opts.Scales,
		mapper:    opts.Mapper,
		pdbLister: pdbs.Lister(),
		podLister: pods.Lister(),
		rcLister:  rcs.Lister(),
		rsLister:  rss.Lister(),
		dLister:   ds.Lister(),
		ssLister:  sss.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "disruption")),
		staleQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "stale_pod_disruption")),
	}
	for _, inf := range []cache.SharedIndexInformer{pdbs.Informer(), pods.Informer(), rcs.Informer(), rss.Informer(), ds.Informer(), sss.Informer()} {
		c.synced = append(c.synced, inf.HasSynced)
	}
	if _, err := pdbs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the informer caches, then runs workers for the budgets
// and for stale pod conditions until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return controllerutil.Workers{
			Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
		}.Run(ctx, workers)
	})
	g.Go(func() error {
		return controllerutil.Workers{
			Name: StalePodControllerName, Queue: c.staleQueue, Sync: c.syncStalePod, Metrics: c.metrics, Synced: c.synced,
		}.Run(ctx, workers)
	})
	return g.Wait()
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	c.podChanged(pod, true)
	c.watchStaleDisruption(pod)
}

func (c *Controller) updatePod(old, cur any) {
	oldPod, curPod := old.(*corev1.Pod), cur.(*corev1.Pod)
	if oldPod.ResourceVersion == curPod.ResourceVersion {
		return
	}
	c.podChanged(curPod, true)
	c.watchStaleDisruption(curPod)
	if !reflect.DeepEqual(oldPod.Labels, curPod.Labels) {
		// Budgets that selected the pod before its labels changed.
		c.podChanged(oldPod, false)
	}
}

func (c *Controller) deletePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
			return
		}
		if pod, ok = tomb.Obj.(*corev1.Pod); !ok {
			utilruntime.HandleError(fmt.Errorf("tombstone contained object that is not a pod %#v", obj))
			return
		}
	}
	c.podChanged(pod, false)
}

// podChanged queues every budget that selects pod. With warn, a pod
// selected by more than one budget gets upstream's warning event: the
// eviction subresource refuses such pods.
func (c *Controller) podChanged(pod *corev1.Pod, warn bool) {
	pdbs, err := c.pdbLister.GetPodPodDisruptionBudgets(pod)
	if err != nil {
		// No budget selects the pod.
		return
	}
	if warn && len(pdbs) > 1 && c.recorder != nil {
		c.recorder.Event(pod, corev1.EventTypeWarning, "MultiplePodDisruptionBudgets",
			fmt.Sprintf("Pod %q/%q matches multiple PodDisruptionBudgets.  Chose %q arbitrarily.", pod.Namespace, pod.Name, pdbs[0].Name))
	}
	for _, pdb := range pdbs {
		c.enqueue(pdb)
	}
}

// event records an event on the budget when the controller has a recorder.
func (c *Controller) event(pdb *policyv1.PodDisruptionBudget, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(pdb, eventType, reason, format, args...)
	}
}
