package ttlafterfinished

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events.
const ControllerName = "ttl-after-finished-controller"

// Options tune the controller.
type Options struct {
	// Clock tells when a TTL expires (nil: the real clock); the queue's
	// delays use it too.
	Clock clock.WithTicker
}

// Controller deletes finished Jobs once their TTL has passed.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	metrics   *metrics.Metrics
	clock     clock.WithTicker
	jobLister batchlisters.JobLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
}

// errNoFinishTime: a finished Job whose condition has no transition time;
// its TTL cannot be computed.
var errNoFinishTime = errors.New("unable to find the time when the Job finished")

// NewController builds the controller and registers its informer handlers.
func NewController(client kubernetes.Interface, jobInformer batchinformers.JobInformer, recorder record.EventRecorder,
	m *metrics.Metrics, opts Options) *Controller {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	cfg := metrics.QueueConfig[string](m, "ttl_jobs_to_delete")
	cfg.Clock = opts.Clock
	c := &Controller{
		client:    client,
		recorder:  recorder,
		metrics:   m,
		clock:     opts.Clock,
		jobLister: jobInformer.Lister(),
		synced:    []cache.InformerSynced{jobInformer.Informer().HasSynced},
		queue:     workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), cfg),
	}
	_, _ = jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueIfNeeded,
		UpdateFunc: func(_, cur any) { c.enqueueIfNeeded(cur) },
	})
	return c
}

// Run waits for the informer cache, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *Controller) enqueueIfNeeded(obj any) {
	job, ok := obj.(*batchv1.Job)
	if !ok || job.DeletionTimestamp != nil || !needsCleanup(job) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(job)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// sync deletes the Job keyed key when its TTL has expired, or requeues it
// for when it will.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	job, err := c.jobLister.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if expired, err := c.expired(ctx, key, job); err != nil || !expired {
		return err
	}
	// The cached TTL may be stale: decide again on the stored Job.
	fresh, err := c.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if expired, err := c.expired(ctx, key, fresh); err != nil || !expired {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Cleaning up Job", "job", klog.KObj(fresh))
	policy := metav1.DeletePropagationForeground
	err = c.client.BatchV1().Jobs(namespace).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &fresh.UID},
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// expired reports whether job's TTL has passed; when it has not, the job
// is requeued for the time left.
func (c *Controller) expired(ctx context.Context, key string, job *batchv1.Job) (bool, error) {
	if job.DeletionTimestamp != nil || !needsCleanup(job) {
		return false, nil
	}
	finishedAt, err := finishTime(job)
	if err != nil {
		// Bad status: say so once per sync and leave the Job.
		c.recorder.Eventf(job, corev1.EventTypeWarning, "InvalidJobStatus", "Cannot apply ttlSecondsAfterFinished: %v", err)
		return false, nil
	}
	now := c.clock.Now()
	if finishedAt.After(now) {
		klog.FromContext(ctx).Info("Warning: Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup will be deferred.", "job", klog.KObj(job))
	}
	left := finishedAt.Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second).Sub(now)
	if left > 0 {
		c.queue.AddAfter(key, left)
		return false, nil
	}
	return true, nil
}

func needsCleanup(job *batchv1.Job) bool {
	if job.Spec.TTLSecondsAfterFinished == nil {
		return false
	}
	_, finished := finishCondition(job)
	return finished
}

func finishCondition(job *batchv1.Job) (batchv1.JobCondition, bool) {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c, true
		}
	}
	return batchv1.JobCondition{}, false
}

// finishTime is when the Job got its Complete or Failed condition.
func finishTime(job *batchv1.Job) (time.Time, error) {
	c, ok := finishCondition(job)
	if !ok || c.LastTransitionTime.IsZero() {
		return time.Time{}, fmt.Errorf("%w: %s/%s", errNoFinishTime, job.Namespace, job.Name)
	}
	return c.LastTransitionTime.Time, nil
}
