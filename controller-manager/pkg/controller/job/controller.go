package job

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events.
const ControllerName = "job-controller"

// Limits of upstream's controller: pods created or deleted in one sync, and
// terminated pods recorded in status.uncountedTerminatedPods at once.
const (
	MaxPodCreateDeletePerSync = 500
	MaxUncountedPods          = 500
)

// DefaultSyncBatchPeriod is how long pod events of a job are gathered
// before it is synced (upstream's syncJobBatchPeriod).
const DefaultSyncBatchPeriod = time.Second

// jobControllerName is the spec.managedBy value of the jobs this controller
// manages (also when managedBy is unset).
const jobControllerName = "kubernetes.io/job-controller"

// Options tune the controller; the zero value is upstream's behaviour.
type Options struct {
	// Clock times back-off, deadlines and conditions (nil: the real
	// clock).
	Clock clock.Clock
	// SyncBatchPeriod delays a job's sync after a pod event so a burst of
	// them makes one sync (0: DefaultSyncBatchPeriod; negative: none).
	SyncBatchPeriod time.Duration
}

// Controller is the Job controller.
type Controller struct {
	client     kubernetes.Interface
	podControl controllerutil.RealPodControl
	recorder   record.EventRecorder
	metrics    *metrics.Metrics
	clock      clock.Clock
	batch      time.Duration

	jobLister  batchlisters.JobLister
	podLister  corelisters.PodLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced

	expectations          *controllerutil.Expectations
	finalizerExpectations *finalizerExpectations
	backoff               *backoffStore
	statusWrites          *statusWrites

	queue       workqueue.TypedRateLimitingInterface[string]
	orphanQueue workqueue.TypedRateLimitingInterface[string]
}

var controllerKind = batchv1.SchemeGroupVersion.WithKind("Job")

// NewController builds the controller and registers its informer handlers.
// recorder's events should have ControllerName as source.
func NewController(client kubernetes.Interface, jobInformer batchinformers.JobInformer, podInformer coreinformers.PodInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) *Controller {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	switch {
	case opts.SyncBatchPeriod == 0:
		opts.SyncBatchPeriod = DefaultSyncBatchPeriod
	case opts.SyncBatchPeriod < 0:
		opts.SyncBatchPeriod = 0
	}
	c := &Controller{
		client:                client,
		podControl:            controllerutil.RealPodControl{Client: client, Recorder: recorder},
		recorder:              recorder,
		metrics:               m,
		clock:                 opts.Clock,
		batch:                 opts.SyncBatchPeriod,
		jobLister:             jobInformer.Lister(),
		podLister:             podInformer.Lister(),
		podIndexer:            podInformer.Informer().GetIndexer(),
		synced:                []cache.InformerSynced{jobInformer.Informer().HasSynced, podInformer.Informer().HasSynced},
		expectations:          controllerutil.NewExpectations(opts.Clock),
		finalizerExpectations: newFinalizerExpectations(),
		backoff:               newBackoffStore(),
		statusWrites:          newStatusWrites(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "job")),
		orphanQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "job_orphan_pod")),
	}
	if err := controllerutil.AddControllerUIDIndex(podInformer.Informer()); err != nil {
		utilruntime.HandleError(fmt.Errorf("adding the controller index: %w", err))
	}
	_, _ = jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj, 0) },
		UpdateFunc: c.updateJob,
		DeleteFunc: c.deleteJob,
	})
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: func(obj any) { c.deletePod(obj, true) },
	})
	return c
}

// Run waits for the informer caches, then runs workers (and one worker
// that frees orphan pods of their tracking finalizer) until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = controllerutil.Workers{
			Name: ControllerName + "-orphan-pods", Queue: c.orphanQueue, Sync: c.syncOrphanPod, Metrics: c.metrics, Synced: c.synced,
		}.Run(ctx, 1)
	}()
	err := controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
	wg.Wait()
	return err
}

// enqueue adds the job obj to the queue after delay.
func (c *Controller) enqueue(obj any, delay time.Duration) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	if delay <= 0 {
		c.queue.Add(key)
		return
	}
	c.queue.AddAfter(key, delay)
}

// enqueueBatched syncs job after the batch period, so the events of many
// pods make one sync.
func (c *Controller) enqueueBatched(job *batchv1.Job) { c.enqueue(job, c.batch) }

func (c *Controller) updateJob(old, cur any) {
	oldJob, curJob := old.(*batchv1.Job), cur.(*batchv1.Job)
	if curJob.Generation == oldJob.Generation && curJob.ResourceVersion == oldJob.ResourceVersion {
		return
	}
	c.enqueue(curJob, 0)
	// A changed deadline: sync again when it passes.
	if curJob.Status.StartTime != nil && curJob.Spec.ActiveDeadlineSeconds != nil &&
		!reflect.DeepEqual(oldJob.Spec.ActiveDeadlineSeconds, curJob.Spec.ActiveDeadlineSeconds) {
		total := time.Duration(*curJob.Spec.ActiveDeadlineSeconds) * time.Second
		c.enqueue(curJob, total-c.clock.Since(curJob.Status.StartTime.Time))
	}
}

func (c *Controller) deleteJob(obj any) {
	job, ok := controllerutil.FromDeleted[*batchv1.Job](obj)
	if !ok {
		return
	}
	c.enqueue(job, 0)
	// The job's sync will not see its pods again: free those that still
	// hold the tracking finalizer.
	pods, err := controllerutil.ByController[*corev1.Pod](c.podIndexer, job.UID)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, p := range pods {
		if hasTrackingFinalizer(p) {
			c.orphanQueue.Add(controllerutil.PodKey(p))
		}
	}
}

// resolveControllerRef returns the Job ref points to, or nil when it is not
// a Job of this cache with that UID.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *batchv1.Job {
	if ref.Kind != controllerKind.Kind || ref.APIVersion != controllerKind.GroupVersion().String() {
		return nil
	}
	job, err := c.jobLister.Jobs(namespace).Get(ref.Name)
	if err != nil || job.UID != ref.UID {
		return nil
	}
	return job
}

// jobsForOrphan returns the jobs whose selector matches the orphan pod.
func (c *Controller) jobsForOrphan(pod *corev1.Pod) []*batchv1.Job {
	all, err := c.jobLister.Jobs(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	return controllerutil.SelectingPod(all, func(j *batchv1.Job) *metav1.LabelSelector { return j.Spec.Selector }, pod)
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		// Seen first while being deleted (after a restart): a deletion.
		c.deletePod(pod, false)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		job := c.resolveControllerRef(pod.Namespace, ref)
		if job == nil {
			if hasTrackingFinalizer(pod) {
				c.orphanQueue.Add(controllerutil.PodKey(pod))
			}
			return
		}
		key, _ := cache.MetaNamespaceKeyFunc(job)
		c.expectations.CreationObserved(key)
		c.enqueueBatched(job)
		return
	}
	if hasTrackingFinalizer(pod) {
		c.orphanQueue.Add(controllerutil.PodKey(pod))
	}
	for _, job := range c.jobsForOrphan(pod) {
		c.enqueueBatched(job)
	}
}

func (c *Controller) updatePod(old, cur any) {
	oldPod, curPod := old.(*corev1.Pod), cur.(*corev1.Pod)
	if curPod.ResourceVersion == oldPod.ResourceVersion {
		return
	}
	if curPod.DeletionTimestamp != nil {
		// A graceful deletion started: the job may replace the pod now.
		c.deletePod(curPod, false)
		return
	}
	// The finalizer may have been removed in the same update that moved
	// the pod to another owner: record the latest state for both.
	finalizerRemoved := !hasTrackingFinalizer(curPod)
	curRef, oldRef := metav1.GetControllerOfNoCopy(curPod), metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if job := c.resolveControllerRef(oldPod.Namespace, oldRef); job != nil {
			c.podChanged(job, curPod, finalizerRemoved)
		}
	}
	if curRef != nil {
		if job := c.resolveControllerRef(curPod.Namespace, curRef); job != nil {
			c.podChanged(job, curPod, finalizerRemoved)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(curPod.Labels, oldPod.Labels) {
		for _, job := range c.jobsForOrphan(curPod) {
			c.enqueueBatched(job)
		}
	}
}

func (c *Controller) podChanged(job *batchv1.Job, pod *corev1.Pod, finalizerRemoved bool) {
	if finalizerRemoved {
		key, _ := cache.MetaNamespaceKeyFunc(job)
		c.finalizerExpectations.observed(key, pod.UID)
	}
	c.enqueueBatched(job)
}

// deletePod handles a pod's removal (final) or the start of its graceful
// deletion.
func (c *Controller) deletePod(obj any, final bool) {
	pod, ok := controllerutil.FromDeleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	hasFinalizer := hasTrackingFinalizer(pod)
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		// An orphan (the garbage collector may have removed its owner
		// reference): only its finalizer matters.
		if hasFinalizer {
			c.orphanQueue.Add(controllerutil.PodKey(pod))
		}
		return
	}
	job := c.resolveControllerRef(pod.Namespace, ref)
	if job == nil || isJobFinished(job) {
		// No sync will remove this pod's finalizer.
		if hasFinalizer {
			c.orphanQueue.Add(controllerutil.PodKey(pod))
		}
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(job)
	c.expectations.DeletionObserved(key, controllerutil.PodKey(pod))
	if final || !hasFinalizer {
		c.finalizerExpectations.observed(key, pod.UID)
	}
	c.enqueueBatched(job)
}

// syncOrphanPod removes the tracking finalizer of a pod that no running
// Job controls any more.
func (c *Controller) syncOrphanPod(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pod, err := c.podLister.Pods(namespace).Get(name)
	if err != nil {
		return ignoreNotFound(err)
	}
	if !hasTrackingFinalizer(pod) {
		return nil
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if ref.Kind != controllerKind.Kind || ref.APIVersion != controllerKind.GroupVersion().String() {
			// Not a Job's pod: not ours to touch.
			return nil
		}
		if job := c.resolveControllerRef(namespace, ref); job != nil && (!isJobFinished(job) || !managedByUs(job)) {
			// Its job counts it.
			return nil
		}
	}
	klog.FromContext(ctx).V(2).Info("Removing the tracking finalizer of an orphan pod", "pod", klog.KObj(pod))
	return ignoreNotFound(c.removeFinalizer(ctx, pod))
}
