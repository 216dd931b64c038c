package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	autoscalinginformers "k8s.io/client-go/informers/autoscaling/v2"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ControllerName is the source of the controller's events, as upstream's.
const ControllerName = "horizontal-pod-autoscaler"

// Controller is the HorizontalPodAutoscaler controller.
type Controller struct {
	client   kubernetes.Interface
	scales   scale.ScalesGetter
	mapper   apimeta.RESTMapper
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	clock    clock.Clock
	opts     Options

	hpaLister autoscalinglisters.HorizontalPodAutoscalerLister
	podLister corelisters.PodLister
	synced    []cache.InformerSynced

	replicaCalc *ReplicaCalculator
	recommender *recommender

	// selectors are the pod selectors of the HPAs' targets, as last read,
	// to refuse two HPAs scaling the same pods.
	selectorsMu sync.Mutex
	selectors   map[string]labels.Selector

	queue workqueue.TypedRateLimitingInterface[string]
}

// NewController builds the controller. scales reaches the /scale
// subresource of any kind mapper knows; metricsClient measures the pods.
func NewController(client kubernetes.Interface, hpaInformer autoscalinginformers.HorizontalPodAutoscalerInformer, podInformer coreinformers.PodInformer,
	scales scale.ScalesGetter, mapper apimeta.RESTMapper, metricsClient MetricsClient, recorder record.EventRecorder, m *metrics.Metrics,
	opts Options) (*Controller, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if errs := opts.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := &Controller{
		client: client, scales: scales, mapper: mapper, recorder: recorder, metrics: m, clock: opts.Clock, opts: opts,
		hpaLister: hpaInformer.Lister(),
		podLister: podInformer.Lister(),
		synced:    []cache.InformerSynced{hpaInformer.Informer().HasSynced, podInformer.Informer().HasSynced},
		replicaCalc: NewReplicaCalculator(metricsClient, podInformer.Lister(), opts.Clock, opts.Tolerance,
			opts.CPUInitializationPeriod, opts.InitialReadinessDelay),
		recommender: newRecommender(opts.Clock, opts.DownscaleStabilizationWindow),
		selectors:   map[string]labels.Selector{},
		// Upstream's queue: every HPA comes back once per sync period.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig[string](fixedIntervalRateLimiter{interval: opts.SyncPeriod},
			metrics.QueueConfig[string](m, "horizontalpodautoscaler")),
	}
	if _, err := hpaInformer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
		DeleteFunc: c.deleteHPA,
	}, opts.SyncPeriod); err != nil {
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

// enqueue puts an HPA on the queue after the sync period, as upstream
// does: a new or changed HPA is reconciled at its next period.
func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.AddRateLimited(key)
}

func (c *Controller) deleteHPA(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.forget(key)
	c.queue.Forget(key)
}

func (c *Controller) forget(key string) {
	c.recommender.forget(key)
	c.selectorsMu.Lock()
	delete(c.selectors, key)
	c.selectorsMu.Unlock()
}

// sync reconciles one HPA and queues it for its next period.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	hpa, err := c.hpaLister.HorizontalPodAutoscalers(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	err = c.reconcileAutoscaler(ctx, hpa, key)
	c.queue.AddRateLimited(key)
	return err
}

// reconcileAutoscaler is upstream's: read the target's scale, compute the
// replicas the metrics ask for, normalize them, scale, and write status.
func (c *Controller) reconcileAutoscaler(ctx context.Context, shared *autoscalingv2.HorizontalPodAutoscaler, key string) (retErr error) {
	logger := klog.FromContext(ctx)
	hpa := shared.DeepCopy()
	if hpa.Spec.Behavior != nil {
		// Filled by the API server's defaults; an object stored before
		// them is filled the same way here.
		if hpa.Spec.Behavior.ScaleUp == nil {
			hpa.Spec.Behavior.ScaleUp = defaults.DefaultHPAScaleUpRules()
		}
		if hpa.Spec.Behavior.ScaleDown == nil {
			hpa.Spec.Behavior.ScaleDown = defaults.DefaultHPAScaleDownRules()
		}
	}
	statusOriginal := hpa.Status.DeepCopy()
	reference := fmt.Sprintf("%s/%s/%s", hpa.Spec.ScaleTargetRef.Kind, hpa.Namespace, hpa.Spec.ScaleTargetRef.Name)

	failedGetScale := func(err error) {
		c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedGetScale", err.Error())
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		if err := c.updateStatusIfNeeded(ctx, statusOriginal, hpa); err != nil {
			utilruntime.HandleError(err)
		}
	}
	targetGV, err := schema.ParseGroupVersion(hpa.Spec.ScaleTargetRef.APIVersion)
	if err != nil {
		failedGetScale(err)
		return fmt.Errorf("invalid API version in scale target reference: %v", err)
	}
	mappings, err := c.mapper.RESTMappings(schema.GroupKind{Group: targetGV.Group, Kind: hpa.Spec.ScaleTargetRef.Kind})
	if err != nil {
		failedGetScale(err)
		return fmt.Errorf("unable to determine resource for scale target reference: %v", err)
	}
	sc, targetGR, err := c.scaleForResourceMappings(ctx, hpa.Namespace, hpa.Spec.ScaleTargetRef.Name, mappings)
	if err != nil {
		failedGetScale(err)
		return fmt.Errorf("failed to query scale subresource for %s: %v", reference, err)
	}
	c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	currentReplicas := sc.Spec.Replicas
	c.recommender.recordInitialRecommendation(key, currentReplicas)

	var (
		metricStatuses  []autoscalingv2.MetricStatus
		desiredReplicas int32
		rescaleReason   string
	)
	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	rescale := true
	switch {
	case currentReplicas == 0 && minReplicas != 0:
		// Autoscaling is off while the target is scaled to zero.
		desiredReplicas, rescale = 0, false
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
	case currentReplicas > hpa.Spec.MaxReplicas:
		rescaleReason, desiredReplicas = "Current number of replicas above Spec.MaxReplicas", hpa.Spec.MaxReplicas
	case currentReplicas < minReplicas:
		rescaleReason, desiredReplicas = "Current number of replicas below Spec.MinReplicas", minReplicas
	default:
		var metricDesired int32
		var metricName string
		metricDesired, metricName, metricStatuses, err = c.computeReplicasForMetrics(ctx, hpa, sc, hpa.Spec.Metrics)
		// Some metrics may fail while others still give a proposal.
		if err != nil && metricDesired == -1 {
			c.setStatus(hpa, currentReplicas, hpa.Status.DesiredReplicas, metricStatuses, false)
			if err := c.updateStatusIfNeeded(ctx, statusOriginal, hpa); err != nil {
				utilruntime.HandleError(err)
			}
			c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %v", reference, err)
		}
		if err != nil {
			retErr = err
		}
		logger.V(4).Info("Proposing desired replicas", "desiredReplicas", metricDesired, "metric", metricName, "currentReplicas", currentReplicas, "scaleTarget", reference)
		rescaleMetric := ""
		if metricDesired > desiredReplicas {
			desiredReplicas, rescaleMetric = metricDesired, metricName
		}
		if desiredReplicas > currentReplicas {
			rescaleReason = fmt.Sprintf("%s above target", rescaleMetric)
		}
		if desiredReplicas < currentReplicas {
			rescaleReason = "All metrics below target"
		}
		if hpa.Spec.Behavior == nil {
			desiredReplicas = c.normalizeDesiredReplicas(hpa, key, currentReplicas, desiredReplicas, minReplicas)
		} else {
			desiredReplicas = c.normalizeDesiredReplicasWithBehaviors(hpa, key, currentReplicas, desiredReplicas, minReplicas)
		}
		rescale = desiredReplicas != currentReplicas
	}

	if rescale {
		sc.Spec.Replicas = desiredReplicas
		if _, err := c.scales.Scales(hpa.Namespace).Update(ctx, targetGR, sc, metav1.UpdateOptions{}); err != nil {
			c.recorder.Eventf(hpa, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desiredReplicas, rescaleReason, err.Error())
			c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
			c.setStatus(hpa, currentReplicas, hpa.Status.DesiredReplicas, metricStatuses, false)
			if err := c.updateStatusIfNeeded(ctx, statusOriginal, hpa); err != nil {
				utilruntime.HandleError(err)
			}
			return fmt.Errorf("failed to rescale %s: %v", reference, err)
		}
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", desiredReplicas)
		c.recorder.Eventf(hpa, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desiredReplicas, rescaleReason)
		c.recommender.storeScaleEvent(hpa.Spec.Behavior, key, currentReplicas, desiredReplicas)
		logger.Info("Successfully rescaled", "HPA", klog.KObj(hpa), "currentReplicas", currentReplicas, "desiredReplicas", desiredReplicas, "reason", rescaleReason)
	} else {
		logger.V(4).Info("Decided not to scale", "scaleTarget", reference, "desiredReplicas", desiredReplicas)
		desiredReplicas = currentReplicas
	}
	c.setStatus(hpa, currentReplicas, desiredReplicas, metricStatuses, rescale)
	if err := c.updateStatusIfNeeded(ctx, statusOriginal, hpa); err != nil {
		return err
	}
	return retErr
}

// scaleForResourceMappings reads /scale through the first mapping that
// answers.
func (c *Controller) scaleForResourceMappings(ctx context.Context, namespace, name string, mappings []*apimeta.RESTMapping) (*autoscalingv1.Scale, schema.GroupResource, error) {
	var firstErr error
	for i, m := range mappings {
		gr := m.Resource.GroupResource()
		sc, err := c.scales.Scales(namespace).Get(ctx, gr, name, metav1.GetOptions{})
		if err == nil {
			return sc, gr, nil
		}
		if i == 0 {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errors.New("unrecognized resource")
	}
	return nil, schema.GroupResource{}, firstErr
}

// computeReplicasForMetrics proposes the largest count any metric asks
// for. When every metric fails, or some fail and the rest would scale
// down, it answers -1 with the first failure's condition set.
func (c *Controller) computeReplicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, sc *autoscalingv1.Scale,
	specs []autoscalingv2.MetricSpec) (replicas int32, metric string, statuses []autoscalingv2.MetricStatus, err error) {
	selector, err := c.validateAndParseSelector(hpa, sc.Status.Selector)
	if err != nil {
		return -1, "", nil, err
	}
	specReplicas, statusReplicas := sc.Spec.Replicas, sc.Status.Replicas
	statuses = make([]autoscalingv2.MetricStatus, len(specs))
	invalid := 0
	var invalidErr error
	var invalidCondition autoscalingv2.HorizontalPodAutoscalerCondition
	for i, spec := range specs {
		proposal, name, condition, err := c.computeReplicasForMetric(ctx, hpa, spec, specReplicas, statusReplicas, selector, &statuses[i])
		if err != nil {
			if invalid == 0 {
				invalidCondition, invalidErr = condition, err
			}
			invalid++
			continue
		}
		if replicas == 0 || proposal > replicas {
			replicas, metric = proposal, name
		}
	}
	if invalidErr != nil {
		invalidErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %v", invalid, len(specs), invalidErr)
	}
	if invalid >= len(specs) || (invalid > 0 && replicas < specReplicas) {
		c.setCondition(hpa, invalidCondition.Type, invalidCondition.Status, invalidCondition.Reason, "%s", invalidCondition.Message)
		return -1, "", statuses, invalidErr
	}
	c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", metric)
	return replicas, metric, statuses, invalidErr
}

// validateAndParseSelector parses the target's selector and refuses one
// whose pods another HPA scales too.
func (c *Controller) validateAndParseSelector(hpa *autoscalingv2.HorizontalPodAutoscaler, selector string) (labels.Selector, error) {
	if selector == "" {
		msg := "selector is required"
		c.recorder.Event(hpa, corev1.EventTypeWarning, "SelectorRequired", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return nil, errors.New(msg)
	}
	parsed, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.recorder.Event(hpa, corev1.EventTypeWarning, "InvalidSelector", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "%s", msg)
		return nil, errors.New(msg)
	}
	key, _ := cache.MetaNamespaceKeyFunc(hpa)
	pods, err := c.podLister.Pods(hpa.Namespace).List(parsed)
	if err != nil {
		return nil, err
	}
	c.selectorsMu.Lock()
	c.selectors[key] = parsed
	selecting := map[string]bool{}
	for _, pod := range pods {
		for k, s := range c.selectors {
			if ns, _, _ := cache.SplitMetaNamespaceKey(k); ns == pod.Namespace && s.Matches(labels.Set(pod.Labels)) {
				selecting[k] = true
			}
		}
	}
	c.selectorsMu.Unlock()
	if len(selecting) > 1 {
		var names []string
		for k := range selecting {
			_, n, _ := cache.SplitMetaNamespaceKey(k)
			names = append(names, n)
		}
		msg := fmt.Sprintf("pods by selector %v are controlled by multiple HPAs: %v", selector, names)
		c.recorder.Event(hpa, corev1.EventTypeWarning, "AmbiguousSelector", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "AmbiguousSelector", "%s", msg)
		return nil, errors.New(msg)
	}
	return parsed, nil
}

// computeReplicasForMetric proposes the count one metric asks for and
// fills its status; on failure it returns the condition to report.
func (c *Controller) computeReplicasForMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	specReplicas, statusReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	var none autoscalingv2.HorizontalPodAutoscalerCondition
	switch {
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		proposal, value, name, err := c.computeStatusForResourceMetricGeneric(ctx, specReplicas, spec.Resource.Target, spec.Resource.Name, hpa.Namespace, "", selector, spec.Type)
		if err != nil {
			return 0, "", c.unableToComputeCondition(hpa, "FailedGetResourceMetric", err), fmt.Errorf("failed to get %s resource metric value: %v", spec.Resource.Name, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: spec.Resource.Name, Current: *value}}
		return proposal, name, none, nil

	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		cr := spec.ContainerResource
		proposal, value, name, err := c.computeStatusForResourceMetricGeneric(ctx, specReplicas, cr.Target, cr.Name, hpa.Namespace, cr.Container, selector, spec.Type)
		if err != nil {
			return 0, "", c.unableToComputeCondition(hpa, "FailedGetContainerResourceMetric", err), fmt.Errorf("failed to get %s container metric value: %v", cr.Container, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: cr.Name, Container: cr.Container, Current: *value}}
		return proposal, name, none, nil

	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		fail := func(err error) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
			return 0, "", c.unableToComputeCondition(hpa, "FailedGetPodsMetric", err), fmt.Errorf("failed to get pods metric value: %v", err)
		}
		metricSelector, err := metav1.LabelSelectorAsSelector(spec.Pods.Metric.Selector)
		if err != nil {
			return fail(err)
		}
		if spec.Pods.Target.AverageValue == nil {
			return fail(errors.New("invalid pods metric source: no average value target was set"))
		}
		proposal, usage, _, err := c.replicaCalc.GetMetricReplicas(ctx, specReplicas, spec.Pods.Target.AverageValue.MilliValue(), spec.Pods.Metric.Name, hpa.Namespace, selector, metricSelector)
		if err != nil {
			return fail(err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Pods: &autoscalingv2.PodsMetricStatus{
			Metric: spec.Pods.Metric, Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)}}}
		return proposal, fmt.Sprintf("pods metric %s", spec.Pods.Metric.Name), none, nil

	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		fail := func(err error) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
			return 0, "", c.unableToComputeCondition(hpa, "FailedGetObjectMetric", err), fmt.Errorf("failed to get object metric value: %v", err)
		}
		o := spec.Object
		metricSelector, err := metav1.LabelSelectorAsSelector(o.Metric.Selector)
		if err != nil {
			return fail(err)
		}
		switch {
		case o.Target.Type == autoscalingv2.ValueMetricType && o.Target.Value != nil:
			proposal, usage, _, err := c.replicaCalc.GetObjectMetricReplicas(ctx, specReplicas, o.Target.Value.MilliValue(), o.Metric.Name, hpa.Namespace, &o.DescribedObject, selector, metricSelector)
			if err != nil {
				return fail(err)
			}
			*status = autoscalingv2.MetricStatus{Type: spec.Type, Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: o.DescribedObject, Metric: o.Metric,
				Current: autoscalingv2.MetricValueStatus{Value: resource.NewMilliQuantity(usage, resource.DecimalSI)}}}
			return proposal, fmt.Sprintf("%s metric %s", o.DescribedObject.Kind, o.Metric.Name), none, nil
		case o.Target.Type == autoscalingv2.AverageValueMetricType && o.Target.AverageValue != nil:
			proposal, usage, _, err := c.replicaCalc.GetObjectPerPodMetricReplicas(ctx, statusReplicas, o.Target.AverageValue.MilliValue(), o.Metric.Name, hpa.Namespace, &o.DescribedObject, metricSelector)
			if err != nil {
				return fail(err)
			}
			*status = autoscalingv2.MetricStatus{Type: spec.Type, Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: o.DescribedObject, Metric: o.Metric,
				Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)}}}
			return proposal, fmt.Sprintf("external metric %s(%+v)", o.Metric.Name, o.Metric.Selector), none, nil
		}
		return fail(errors.New("invalid object metric source: neither a value target nor an average value target was set"))

	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		e := spec.External
		fail := func(err error) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
			return 0, "", c.unableToComputeCondition(hpa, "FailedGetExternalMetric", err), fmt.Errorf("failed to get %s external metric value: %v", e.Metric.Name, err)
		}
		switch {
		case e.Target.AverageValue != nil:
			proposal, usage, _, err := c.replicaCalc.GetExternalPerPodMetricReplicas(ctx, statusReplicas, e.Target.AverageValue.MilliValue(), e.Metric.Name, hpa.Namespace, e.Metric.Selector)
			if err != nil {
				return fail(err)
			}
			*status = autoscalingv2.MetricStatus{Type: spec.Type, External: &autoscalingv2.ExternalMetricStatus{Metric: e.Metric,
				Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)}}}
			return proposal, fmt.Sprintf("external metric %s(%+v)", e.Metric.Name, e.Metric.Selector), none, nil
		case e.Target.Value != nil:
			proposal, usage, _, err := c.replicaCalc.GetExternalMetricReplicas(ctx, specReplicas, e.Target.Value.MilliValue(), e.Metric.Name, hpa.Namespace, e.Metric.Selector, selector)
			if err != nil {
				return fail(err)
			}
			*status = autoscalingv2.MetricStatus{Type: spec.Type, External: &autoscalingv2.ExternalMetricStatus{Metric: e.Metric,
				Current: autoscalingv2.MetricValueStatus{Value: resource.NewMilliQuantity(usage, resource.DecimalSI)}}}
			return proposal, fmt.Sprintf("external metric %s(%+v)", e.Metric.Name, e.Metric.Selector), none, nil
		}
		return fail(errors.New("invalid external metric source: neither a value target nor an average value target was set"))
	}
	err := fmt.Errorf("unknown metric source type %q", string(spec.Type))
	return 0, "", c.unableToComputeCondition(hpa, "InvalidMetricSourceType", err), err
}

// computeStatusForResourceMetricGeneric proposes a count for a resource
// target: an average value, or a utilization of the requests.
func (c *Controller) computeStatusForResourceMetricGeneric(ctx context.Context, currentReplicas int32, target autoscalingv2.MetricTarget, resourceName corev1.ResourceName,
	namespace, container string, selector labels.Selector, sourceType autoscalingv2.MetricSourceType) (int32, *autoscalingv2.MetricValueStatus, string, error) {
	if target.AverageValue != nil {
		proposal, raw, _, err := c.replicaCalc.GetRawResourceReplicas(ctx, currentReplicas, target.AverageValue.MilliValue(), resourceName, namespace, selector, container)
		if err != nil {
			return 0, nil, "", fmt.Errorf("failed to get %s usage: %v", resourceName, err)
		}
		return proposal, &autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(raw, resource.DecimalSI)}, fmt.Sprintf("%s resource", resourceName), nil
	}
	if target.AverageUtilization == nil {
		return 0, nil, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	proposal, percentage, raw, _, err := c.replicaCalc.GetResourceReplicas(ctx, currentReplicas, *target.AverageUtilization, resourceName, namespace, selector, container)
	if err != nil {
		return 0, nil, "", fmt.Errorf("failed to get %s utilization: %v", resourceName, err)
	}
	name := fmt.Sprintf("%s resource utilization (percentage of request)", resourceName)
	if sourceType == autoscalingv2.ContainerResourceMetricSourceType {
		name = fmt.Sprintf("%s container resource utilization (percentage of request)", resourceName)
	}
	return proposal, &autoscalingv2.MetricValueStatus{AverageUtilization: &percentage, AverageValue: resource.NewMilliQuantity(raw, resource.DecimalSI)}, name, nil
}

// unableToComputeCondition records the failure as an event and returns
// the ScalingActive condition that reports it.
func (c *Controller) unableToComputeCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	c.recorder.Event(hpa, corev1.EventTypeWarning, reason, err.Error())
	return autoscalingv2.HorizontalPodAutoscalerCondition{
		Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: reason,
		Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err),
	}
}

// normalizeDesiredReplicas (no behavior): the downscale window, then
// min/max and the fixed scale-up rate.
func (c *Controller) normalizeDesiredReplicas(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, currentReplicas, prenormalized, minReplicas int32) int32 {
	stabilized := c.recommender.stabilizeRecommendation(key, prenormalized)
	if stabilized != prenormalized {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := convertDesiredReplicasWithRules(currentReplicas, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	status := corev1.ConditionTrue
	if desired == stabilized {
		status = corev1.ConditionFalse
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, "%s", message)
	return desired
}

// normalizeDesiredReplicasWithBehaviors: both windows, then the policies'
// rates and min/max.
func (c *Controller) normalizeDesiredReplicasWithBehaviors(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, currentReplicas, prenormalized, minReplicas int32) int32 {
	if hpa.Spec.Behavior.ScaleDown.StabilizationWindowSeconds == nil {
		w := int32(c.opts.DownscaleStabilizationWindow.Seconds())
		hpa.Spec.Behavior.ScaleDown.StabilizationWindowSeconds = &w
	}
	if hpa.Spec.Behavior.ScaleUp.StabilizationWindowSeconds == nil {
		var w int32
		hpa.Spec.Behavior.ScaleUp.StabilizationWindowSeconds = &w
	}
	args := normalizationArg{
		Key: key, ScaleUpBehavior: hpa.Spec.Behavior.ScaleUp, ScaleDownBehavior: hpa.Spec.Behavior.ScaleDown,
		MinReplicas: minReplicas, MaxReplicas: hpa.Spec.MaxReplicas, CurrentReplicas: currentReplicas, DesiredReplicas: prenormalized,
	}
	stabilized, reason, message := c.recommender.stabilizeRecommendationWithBehaviors(args)
	args.DesiredReplicas = stabilized
	if stabilized != prenormalized {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, "%s", message)
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := c.recommender.convertDesiredReplicasWithBehaviorRate(args)
	status := corev1.ConditionTrue
	if desired == stabilized {
		status = corev1.ConditionFalse
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, "%s", message)
	return desired
}

// setStatus writes the replicas and metrics, and the scale time when the
// target was rescaled; the conditions are kept.
func (c *Controller) setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, currentReplicas, desiredReplicas int32, metricStatuses []autoscalingv2.MetricStatus, rescale bool) {
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		CurrentReplicas: currentReplicas,
		DesiredReplicas: desiredReplicas,
		LastScaleTime:   hpa.Status.LastScaleTime,
		CurrentMetrics:  metricStatuses,
		Conditions:      hpa.Status.Conditions,
	}
	if rescale {
		now := metav1.NewTime(c.clock.Now())
		hpa.Status.LastScaleTime = &now
	}
}

// updateStatusIfNeeded writes the status through /status when it changed.
func (c *Controller) updateStatusIfNeeded(ctx context.Context, old *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	if equality.Semantic.DeepEqual(old, &hpa.Status) {
		return nil
	}
	if _, err := c.client.AutoscalingV2().HorizontalPodAutoscalers(hpa.Namespace).UpdateStatus(ctx, hpa, metav1.UpdateOptions{}); err != nil {
		c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %v", hpa.Name, err)
	}
	return nil
}

// setCondition sets a condition, moving its transition time only when its
// status changes.
func (c *Controller) setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus,
	reason, message string, args ...any) {
	var cond *autoscalingv2.HorizontalPodAutoscalerCondition
	for i := range hpa.Status.Conditions {
		if hpa.Status.Conditions[i].Type == typ {
			cond = &hpa.Status.Conditions[i]
			break
		}
	}
	if cond == nil {
		hpa.Status.Conditions = append(hpa.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ})
		cond = &hpa.Status.Conditions[len(hpa.Status.Conditions)-1]
	}
	if cond.Status != status {
		cond.LastTransitionTime = metav1.NewTime(c.clock.Now())
	}
	cond.Status, cond.Reason, cond.Message = status, reason, fmt.Sprintf(message, args...)
}

// fixedIntervalRateLimiter delays every item by the same interval
// (upstream's FixedItemIntervalRateLimiter): an HPA comes back once per
// sync period, failed or not.
type fixedIntervalRateLimiter struct{ interval time.Duration }

func (r fixedIntervalRateLimiter) When(string) time.Duration { return r.interval }
func (fixedIntervalRateLimiter) Forget(string)               {}
func (fixedIntervalRateLimiter) NumRequeues(string) int      { return 1 }

var _ workqueue.TypedRateLimiter[string] = fixedIntervalRateLimiter{}
