package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
)

// PodMetric is one pod's measurement: its value (milli-units), when it was
// taken and over which window.
type PodMetric struct {
	Timestamp time.Time
	Window    time.Duration
	Value     int64
}

// PodMetricsInfo is the measurement of each pod, by pod name.
type PodMetricsInfo map[string]PodMetric

// MetricsClient reads the metrics an HPA scales on.
type MetricsClient interface {
	// GetResourceMetric returns the usage of resource by the pods selector
	// picks in namespace (only container's, when container is set), and
	// the time of the measurement.
	GetResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error)
	// GetRawMetric reads a per-pod custom metric (custom.metrics.k8s.io).
	GetRawMetric(ctx context.Context, metricName, namespace string, selector, metricSelector labels.Selector) (PodMetricsInfo, time.Time, error)
	// GetObjectMetric reads a custom metric of one object.
	GetObjectMetric(ctx context.Context, metricName, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error)
	// GetExternalMetric reads an external metric (external.metrics.k8s.io).
	GetExternalMetric(ctx context.Context, metricName, namespace string, selector labels.Selector) ([]int64, time.Time, error)
}

// Errors for the metrics APIs skiff does not serve.
var (
	ErrCustomMetricsNotServed   = errors.New("the custom metrics API (custom.metrics.k8s.io) is not served in this cluster; only resource metrics (metrics.k8s.io) are")
	ErrExternalMetricsNotServed = errors.New("the external metrics API (external.metrics.k8s.io) is not served in this cluster; only resource metrics (metrics.k8s.io) are")
)

// resourceMetricsClient reads metrics.k8s.io/v1beta1 PodMetrics, as
// upstream's resourceMetricsClient.
type resourceMetricsClient struct {
	client metricsclient.PodMetricsesGetter
}

var _ MetricsClient = resourceMetricsClient{}

// NewResourceMetricsClient returns a MetricsClient over the resource
// metrics API; custom and external metrics answer that their APIs are not
// served.
func NewResourceMetricsClient(client metricsclient.PodMetricsesGetter) MetricsClient {
	return resourceMetricsClient{client: client}
}

func (c resourceMetricsClient) GetResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error) {
	metrics, err := c.client.PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %v", err)
	}
	if len(metrics.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	var res PodMetricsInfo
	if container != "" {
		if res, err = containerMetrics(metrics.Items, resource, container); err != nil {
			return nil, time.Time{}, fmt.Errorf("failed to get container metrics: %v", err)
		}
	} else {
		res = podMetrics(ctx, metrics.Items, resource)
	}
	return res, metrics.Items[0].Timestamp.Time, nil
}

func containerMetrics(raw []metricsv1beta1.PodMetrics, resource corev1.ResourceName, container string) (PodMetricsInfo, error) {
	res := make(PodMetricsInfo, len(raw))
	for _, m := range raw {
		found := false
		for _, c := range m.Containers {
			if c.Name != container {
				continue
			}
			found = true
			if v, ok := c.Usage[resource]; ok {
				res[m.Name] = PodMetric{Timestamp: m.Timestamp.Time, Window: m.Window.Duration, Value: v.MilliValue()}
			}
			break
		}
		if !found {
			return nil, fmt.Errorf("container %s not present in metrics for pod %s/%s", container, m.Namespace, m.Name)
		}
	}
	return res, nil
}

// podMetrics sums the containers of each pod; a pod with a container
// missing the resource has no measurement.
func podMetrics(ctx context.Context, raw []metricsv1beta1.PodMetrics, resource corev1.ResourceName) PodMetricsInfo {
	res := make(PodMetricsInfo, len(raw))
	for _, m := range raw {
		var sum int64
		missing := len(m.Containers) == 0
		for _, c := range m.Containers {
			v, ok := c.Usage[resource]
			if !ok {
				missing = true
				klog.FromContext(ctx).V(2).Info("Missing resource metric", "resourceMetric", resource, "pod", klog.KRef(m.Namespace, m.Name))
				break
			}
			sum += v.MilliValue()
		}
		if !missing {
			res[m.Name] = PodMetric{Timestamp: m.Timestamp.Time, Window: m.Window.Duration, Value: sum}
		}
	}
	return res
}

func (resourceMetricsClient) GetRawMetric(context.Context, string, string, labels.Selector, labels.Selector) (PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", ErrCustomMetricsNotServed)
}

func (resourceMetricsClient) GetObjectMetric(context.Context, string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", ErrCustomMetricsNotServed)
}

func (resourceMetricsClient) GetExternalMetric(context.Context, string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from external metrics API: %w", ErrExternalMetricsNotServed)
}
