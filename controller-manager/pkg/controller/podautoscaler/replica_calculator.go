package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"
)

// ReplicaCalculator turns a metric's measurement and target into a replica
// count, as upstream's: the ratio of usage to target, scaled by the pods
// measured, left alone within the tolerance.
type ReplicaCalculator struct {
	metrics   MetricsClient
	podLister corelisters.PodLister
	clock     clock.PassiveClock
	// tolerance is the fraction around the target within which nothing
	// changes (upstream's --horizontal-pod-autoscaler-tolerance, 0.1).
	tolerance float64
	// cpuInitializationPeriod: a pod's CPU samples are trusted only once
	// it is Ready and a window has passed, until this long after its start.
	cpuInitializationPeriod time.Duration
	// delayOfInitialReadinessStatus: after that, a not-ready pod is still
	// ignored if it has never been ready since this long after its start.
	delayOfInitialReadinessStatus time.Duration
}

// NewReplicaCalculator builds a ReplicaCalculator (clk nil: the real clock).
func NewReplicaCalculator(metrics MetricsClient, podLister corelisters.PodLister, clk clock.PassiveClock, tolerance float64,
	cpuInitializationPeriod, delayOfInitialReadinessStatus time.Duration) *ReplicaCalculator {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &ReplicaCalculator{metrics: metrics, podLister: podLister, clock: clk, tolerance: tolerance,
		cpuInitializationPeriod: cpuInitializationPeriod, delayOfInitialReadinessStatus: delayOfInitialReadinessStatus}
}

var errNoPods = errors.New("no pods returned by selector while calculating replica count")

// GetResourceReplicas computes the replicas for a utilization target (a
// percentage of the pods' requests): the count, the current utilization
// and the average raw usage (milli-units).
func (c *ReplicaCalculator) GetResourceReplicas(ctx context.Context, currentReplicas int32, targetUtilization int32, resource corev1.ResourceName,
	namespace string, selector labels.Selector, container string) (replicaCount int32, utilization int32, rawUtilization int64, timestamp time.Time, err error) {
	metrics, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, namespace, selector, container)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %v", resource, err)
	}
	pods, err := c.podLister.Pods(namespace).List(selector)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("unable to get pods while calculating replica count: %v", err)
	}
	if len(pods) == 0 {
		return 0, 0, 0, time.Time{}, errNoPods
	}
	readyPodCount, unreadyPods, missingPods, ignoredPods := c.groupPods(pods, metrics, resource)
	removeMetricsForPods(metrics, ignoredPods)
	removeMetricsForPods(metrics, unreadyPods)
	if len(metrics) == 0 {
		return 0, 0, 0, time.Time{}, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	requests, err := calculatePodRequests(pods, container, resource)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	usageRatio, utilization, rawUtilization, err := resourceUtilizationRatio(metrics, requests, targetUtilization)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}

	scaleUpWithUnready := len(unreadyPods) > 0 && usageRatio > 1.0
	if !scaleUpWithUnready && len(missingPods) == 0 {
		if math.Abs(1.0-usageRatio) <= c.tolerance {
			return currentReplicas, utilization, rawUtilization, timestamp, nil
		}
		return int32(math.Ceil(usageRatio * float64(readyPodCount))), utilization, rawUtilization, timestamp, nil
	}
	if len(missingPods) > 0 {
		if usageRatio < 1.0 {
			// On a scale-down a pod without a metric counts as using its
			// whole request (or the target, when that is above 100%).
			fallback := int64(max(100, targetUtilization))
			for name := range missingPods {
				metrics[name] = PodMetric{Value: requests[name] * fallback / 100}
			}
		} else if usageRatio > 1.0 {
			// On a scale-up, as using nothing.
			for name := range missingPods {
				metrics[name] = PodMetric{Value: 0}
			}
		}
	}
	if scaleUpWithUnready {
		for name := range unreadyPods {
			metrics[name] = PodMetric{Value: 0}
		}
	}
	newUsageRatio, _, _, err := resourceUtilizationRatio(metrics, requests, targetUtilization)
	if err != nil {
		return 0, utilization, rawUtilization, time.Time{}, err
	}
	if math.Abs(1.0-newUsageRatio) <= c.tolerance || (usageRatio < 1.0 && newUsageRatio > 1.0) || (usageRatio > 1.0 && newUsageRatio < 1.0) {
		// Too small a change, or the pods without metrics turn the
		// direction around: stay.
		return currentReplicas, utilization, rawUtilization, timestamp, nil
	}
	newReplicas := int32(math.Ceil(newUsageRatio * float64(len(metrics))))
	if (newUsageRatio < 1.0 && newReplicas > currentReplicas) || (newUsageRatio > 1.0 && newReplicas < currentReplicas) {
		return currentReplicas, utilization, rawUtilization, timestamp, nil
	}
	return newReplicas, utilization, rawUtilization, timestamp, nil
}

// GetRawResourceReplicas computes the replicas for an average-value target
// of a resource (milli-units): the count and the current average usage.
func (c *ReplicaCalculator) GetRawResourceReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, resource corev1.ResourceName,
	namespace string, selector labels.Selector, container string) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	metrics, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, namespace, selector, container)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %v", resource, err)
	}
	replicaCount, usage, err = c.calcPlainMetricReplicas(metrics, currentReplicas, targetUsage, namespace, selector, resource)
	return replicaCount, usage, timestamp, err
}

// GetMetricReplicas computes the replicas for a per-pod custom metric.
func (c *ReplicaCalculator) GetMetricReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName, namespace string,
	selector, metricSelector labels.Selector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	metrics, timestamp, err := c.metrics.GetRawMetric(ctx, metricName, namespace, selector, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %v", metricName, err)
	}
	replicaCount, usage, err = c.calcPlainMetricReplicas(metrics, currentReplicas, targetUsage, namespace, selector, "")
	return replicaCount, usage, timestamp, err
}

func (c *ReplicaCalculator) calcPlainMetricReplicas(metrics PodMetricsInfo, currentReplicas int32, targetUsage int64, namespace string,
	selector labels.Selector, resource corev1.ResourceName) (replicaCount int32, usage int64, err error) {
	pods, err := c.podLister.Pods(namespace).List(selector)
	if err != nil {
		return 0, 0, fmt.Errorf("unable to get pods while calculating replica count: %v", err)
	}
	if len(pods) == 0 {
		return 0, 0, errNoPods
	}
	readyPodCount, unreadyPods, missingPods, ignoredPods := c.groupPods(pods, metrics, resource)
	removeMetricsForPods(metrics, ignoredPods)
	removeMetricsForPods(metrics, unreadyPods)
	if len(metrics) == 0 {
		return 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	usageRatio, usage := metricUsageRatio(metrics, targetUsage)

	scaleUpWithUnready := len(unreadyPods) > 0 && usageRatio > 1.0
	if !scaleUpWithUnready && len(missingPods) == 0 {
		if math.Abs(1.0-usageRatio) <= c.tolerance {
			return currentReplicas, usage, nil
		}
		return int32(math.Ceil(usageRatio * float64(readyPodCount))), usage, nil
	}
	if len(missingPods) > 0 {
		if usageRatio < 1.0 {
			// On a scale-down a pod without a metric uses exactly the target.
			for name := range missingPods {
				metrics[name] = PodMetric{Value: targetUsage}
			}
		} else {
			for name := range missingPods {
				metrics[name] = PodMetric{Value: 0}
			}
		}
	}
	if scaleUpWithUnready {
		for name := range unreadyPods {
			metrics[name] = PodMetric{Value: 0}
		}
	}
	newUsageRatio, _ := metricUsageRatio(metrics, targetUsage)
	if math.Abs(1.0-newUsageRatio) <= c.tolerance || (usageRatio < 1.0 && newUsageRatio > 1.0) || (usageRatio > 1.0 && newUsageRatio < 1.0) {
		return currentReplicas, usage, nil
	}
	newReplicas := int32(math.Ceil(newUsageRatio * float64(len(metrics))))
	if (newUsageRatio < 1.0 && newReplicas > currentReplicas) || (newUsageRatio > 1.0 && newReplicas < currentReplicas) {
		return currentReplicas, usage, nil
	}
	return newReplicas, usage, nil
}

// GetObjectMetricReplicas computes the replicas for a value target of an
// object's metric.
func (c *ReplicaCalculator) GetObjectMetricReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName, namespace string,
	ref *autoscalingv2.CrossVersionObjectReference, selector, metricSelector labels.Selector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	usage, _, err = c.metrics.GetObjectMetric(ctx, metricName, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %v on %s %s/%s", metricName, ref.Kind, namespace, ref.Name, err)
	}
	replicaCount, timestamp, err = c.usageRatioReplicaCount(currentReplicas, float64(usage)/float64(targetUsage), namespace, selector)
	return replicaCount, usage, timestamp, err
}

// GetObjectPerPodMetricReplicas computes the replicas for an average-value
// target of an object's metric.
func (c *ReplicaCalculator) GetObjectPerPodMetricReplicas(ctx context.Context, statusReplicas int32, targetAverageUsage int64, metricName, namespace string,
	ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	usage, timestamp, err = c.metrics.GetObjectMetric(ctx, metricName, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %v on %s %s/%s", metricName, ref.Kind, namespace, ref.Name, err)
	}
	replicaCount, usage = c.perPodReplicas(statusReplicas, usage, targetAverageUsage)
	return replicaCount, usage, timestamp, nil
}

// GetExternalMetricReplicas computes the replicas for a value target of an
// external metric (the sum of the series the selector picks).
func (c *ReplicaCalculator) GetExternalMetricReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName, namespace string,
	metricSelector *metav1.LabelSelector, podSelector labels.Selector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	usage, _, err = c.externalUsage(ctx, metricName, namespace, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	replicaCount, timestamp, err = c.usageRatioReplicaCount(currentReplicas, float64(usage)/float64(targetUsage), namespace, podSelector)
	return replicaCount, usage, timestamp, err
}

// GetExternalPerPodMetricReplicas computes the replicas for an
// average-value target of an external metric.
func (c *ReplicaCalculator) GetExternalPerPodMetricReplicas(ctx context.Context, statusReplicas int32, targetUsagePerPod int64, metricName, namespace string,
	metricSelector *metav1.LabelSelector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	usage, timestamp, err = c.externalUsage(ctx, metricName, namespace, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	replicaCount, usage = c.perPodReplicas(statusReplicas, usage, targetUsagePerPod)
	return replicaCount, usage, timestamp, nil
}

func (c *ReplicaCalculator) externalUsage(ctx context.Context, metricName, namespace string, metricSelector *metav1.LabelSelector) (int64, time.Time, error) {
	sel, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, time.Time{}, err
	}
	values, timestamp, err := c.metrics.GetExternalMetric(ctx, metricName, namespace, sel)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %s", namespace, metricName, metricSelector, err)
	}
	var usage int64
	for _, v := range values {
		usage += v
	}
	return usage, timestamp, nil
}

// perPodReplicas divides a total by the per-pod target, unless the change
// is within the tolerance; usage becomes the per-pod average.
func (c *ReplicaCalculator) perPodReplicas(statusReplicas int32, usage, targetPerPod int64) (int32, int64) {
	replicaCount := statusReplicas
	usageRatio := float64(usage) / (float64(targetPerPod) * float64(replicaCount))
	if math.Abs(1.0-usageRatio) > c.tolerance {
		replicaCount = int32(math.Ceil(float64(usage) / float64(targetPerPod)))
	}
	return replicaCount, int64(math.Ceil(float64(usage) / float64(statusReplicas)))
}

func (c *ReplicaCalculator) usageRatioReplicaCount(currentReplicas int32, usageRatio float64, namespace string, selector labels.Selector) (int32, time.Time, error) {
	if currentReplicas == 0 {
		return int32(math.Ceil(usageRatio)), time.Time{}, nil
	}
	if math.Abs(1.0-usageRatio) <= c.tolerance {
		return currentReplicas, time.Time{}, nil
	}
	pods, err := c.podLister.Pods(namespace).List(selector)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to calculate ready pods: %s", err)
	}
	if len(pods) == 0 {
		return 0, time.Time{}, fmt.Errorf("unable to calculate ready pods: %s", errNoPods)
	}
	ready := 0
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && podReady(p) {
			ready++
		}
	}
	return int32(math.Ceil(usageRatio * float64(ready))), time.Time{}, nil
}

// groupPods sorts the pods as upstream: deleted and failed pods are
// ignored; pending ones are unready; pods without a sample are missing;
// for CPU, a pod that is not Ready, or whose sample may predate its
// readiness while it is still initializing, is unready.
func (c *ReplicaCalculator) groupPods(pods []*corev1.Pod, metrics PodMetricsInfo, resource corev1.ResourceName) (readyPodCount int, unreadyPods, missingPods, ignoredPods sets.Set[string]) {
	unreadyPods, missingPods, ignoredPods = sets.New[string](), sets.New[string](), sets.New[string]()
	now := c.clock.Now()
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			ignoredPods.Insert(pod.Name)
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			unreadyPods.Insert(pod.Name)
			continue
		}
		metric, found := metrics[pod.Name]
		if !found {
			missingPods.Insert(pod.Name)
			continue
		}
		if resource == corev1.ResourceCPU {
			var unready bool
			cond := readyCondition(pod)
			if cond == nil || pod.Status.StartTime == nil {
				unready = true
			} else if pod.Status.StartTime.Add(c.cpuInitializationPeriod).After(now) {
				// Still initializing: only a Ready pod's sample taken a
				// whole window after it turned Ready counts.
				unready = cond.Status == corev1.ConditionFalse || metric.Timestamp.Before(cond.LastTransitionTime.Time.Add(metric.Window))
			} else {
				// A pod that has never been ready is ignored.
				unready = cond.Status == corev1.ConditionFalse && pod.Status.StartTime.Add(c.delayOfInitialReadinessStatus).After(cond.LastTransitionTime.Time)
			}
			if unready {
				unreadyPods.Insert(pod.Name)
				continue
			}
		}
		readyPodCount++
	}
	return readyPodCount, unreadyPods, missingPods, ignoredPods
}

func readyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	c := readyCondition(pod)
	return c != nil && c.Status == corev1.ConditionTrue
}

func removeMetricsForPods(metrics PodMetricsInfo, pods sets.Set[string]) {
	for name := range pods {
		delete(metrics, name)
	}
}

// calculatePodRequests sums each pod's requests of resource (only
// container's when set), counting sidecars (restartable init containers);
// a container without the request is an error.
func calculatePodRequests(pods []*corev1.Pod, container string, resource corev1.ResourceName) (map[string]int64, error) {
	requests := make(map[string]int64, len(pods))
	for _, pod := range pods {
		containers := append([]corev1.Container{}, pod.Spec.Containers...)
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				containers = append(containers, c)
			}
		}
		var sum int64
		for _, c := range containers {
			if container != "" && container != c.Name {
				continue
			}
			req, ok := c.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
			}
			sum += req.MilliValue()
		}
		requests[pod.Name] = sum
	}
	return requests, nil
}

// resourceUtilizationRatio is upstream's GetResourceUtilizationRatio:
// usage over requests of the pods that have both, as a percentage and as a
// ratio to the target, and the average raw usage.
func resourceUtilizationRatio(metrics PodMetricsInfo, requests map[string]int64, targetUtilization int32) (float64, int32, int64, error) {
	var metricsTotal, requestsTotal int64
	n := 0
	for name, m := range metrics {
		req, ok := requests[name]
		if !ok {
			continue
		}
		metricsTotal += m.Value
		requestsTotal += req
		n++
	}
	if requestsTotal == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	current := int32((metricsTotal * 100) / requestsTotal)
	return float64(current) / float64(targetUtilization), current, metricsTotal / int64(n), nil
}

// metricUsageRatio is upstream's GetMetricUsageRatio.
func metricUsageRatio(metrics PodMetricsInfo, targetUsage int64) (float64, int64) {
	var total int64
	for _, m := range metrics {
		total += m.Value
	}
	current := total / int64(len(metrics))
	return float64(current) / float64(targetUsage), current
}
