package cronjob

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName names the controller and the source of its events, as
// upstream's.
const ControllerName = "cronjob-controller"

// Options tune the controller; the zero value is upstream's behaviour.
type Options struct {
	// Clock is the time schedules are compared with (nil: the real clock).
	Clock clock.Clock
}

// Controller is the CronJob controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	clock    clock.Clock

	cronJobLister batchlisters.CronJobLister
	jobIndexer    cache.Indexer
	synced        []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

var controllerKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// NewController builds the controller and registers its informer handlers
// and the Jobs' controller index. recorder's events should have
// ControllerName as source.
func NewController(client kubernetes.Interface, cronJobInformer batchinformers.CronJobInformer, jobInformer batchinformers.JobInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts Options) (*Controller, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	c := &Controller{
		client:        client,
		recorder:      recorder,
		metrics:       m,
		clock:         opts.Clock,
		cronJobLister: cronJobInformer.Lister(),
		jobIndexer:    jobInformer.Informer().GetIndexer(),
		synced:        []cache.InformerSynced{cronJobInformer.Informer().HasSynced, jobInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "cronjob")),
	}
	if err := controllerutil.AddControllerUIDIndex(jobInformer.Informer()); err != nil {
		return nil, fmt.Errorf("adding the controller index to the Job informer: %w", err)
	}
	if _, err := cronJobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.updateCronJob,
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, err
	}
	if _, err := jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addJob,
		UpdateFunc: c.updateJob,
		DeleteFunc: c.deleteJob,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the informer caches, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{
		Name: ControllerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics, Synced: c.synced,
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueueAfter(obj any, after time.Duration) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.AddAfter(key, after)
}

// updateCronJob requeues a CronJob for its next schedule time when its
// schedule or time zone changed (an earlier time than the one queued takes
// effect; a later one makes the queued sync a no-op), and right away for
// any other change.
func (c *Controller) updateCronJob(old, cur any) {
	oldCJ, okOld := old.(*batchv1.CronJob)
	newCJ, okNew := cur.(*batchv1.CronJob)
	if !okOld || !okNew {
		return
	}
	if oldCJ.Spec.Schedule != newCJ.Spec.Schedule || !ptr.Equal(oldCJ.Spec.TimeZone, newCJ.Spec.TimeZone) {
		sched, err := cron.ParseStandard(formatSchedule(newCJ, nil))
		if err != nil {
			klog.Background().V(2).Info("Unparseable schedule for cronjob", "cronjob", klog.KObj(newCJ),
				"schedule", newCJ.Spec.Schedule, "err", err)
			c.recorder.Eventf(newCJ, corev1.EventTypeWarning, "UnParseableCronJobSchedule", "unparseable schedule for cronjob: %s", newCJ.Spec.Schedule)
			return
		}
		c.enqueueAfter(newCJ, nextScheduleTimeDuration(newCJ, c.clock.Now(), sched))
		return
	}
	c.enqueue(cur)
}

// resolveControllerRef returns the CronJob ref points to, or nil when it
// is not a CronJob of this cache with that UID.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *batchv1.CronJob {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	cj, err := c.cronJobLister.CronJobs(namespace).Get(ref.Name)
	if err != nil || cj.UID != ref.UID {
		return nil
	}
	return cj
}

func (c *Controller) addJob(obj any) {
	job := obj.(*batchv1.Job)
	if job.DeletionTimestamp != nil {
		c.deleteJob(job)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(job); ref != nil {
		if cj := c.resolveControllerRef(job.Namespace, ref); cj != nil {
			c.enqueue(cj)
		}
	}
}

func (c *Controller) updateJob(old, cur any) {
	oldJob, curJob := old.(*batchv1.Job), cur.(*batchv1.Job)
	if curJob.ResourceVersion == oldJob.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(curJob), metav1.GetControllerOfNoCopy(oldJob)
	if !reflect.DeepEqual(curRef, oldRef) && oldRef != nil {
		if cj := c.resolveControllerRef(oldJob.Namespace, oldRef); cj != nil {
			c.enqueue(cj)
		}
	}
	if curRef != nil {
		if cj := c.resolveControllerRef(curJob.Namespace, curRef); cj != nil {
			c.enqueue(cj)
		}
	}
}

func (c *Controller) deleteJob(obj any) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("couldn't get object from tombstone %#v", obj))
			return
		}
		if job, ok = tomb.Obj.(*batchv1.Job); !ok {
			utilruntime.HandleError(fmt.Errorf("tombstone contained object that is not a Job %#v", obj))
			return
		}
	}
	ref := metav1.GetControllerOfNoCopy(job)
	if ref == nil {
		return
	}
	if cj := c.resolveControllerRef(job.Namespace, ref); cj != nil {
		c.enqueue(cj)
	}
}
