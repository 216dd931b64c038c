package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Metrics are the controller-manager's controller metrics.
type Metrics struct {
	syncTotal    *prometheus.CounterVec
	syncDuration *prometheus.HistogramVec
	queue        *queueProvider
	// cronJobSkew is upstream's CronJob controller histogram.
	cronJobSkew prometheus.Histogram
	// The EndpointSlice controller's: upstream's
	// endpoint_slice_controller_* series and skiff's change-to-write
	// step histogram.
	sliceAdded, sliceRemoved, sliceChangeToWrite prometheus.Histogram
	sliceChanges, sliceSyncs                     *prometheus.CounterVec
}

// New registers the metrics on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		syncTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_sync_total",
			Help: "Syncs run by each controller, by result (success or error).",
		}, []string{"controller", "result"}),
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "controller_sync_duration_seconds",
			Help:    "How long each controller's syncs took.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}, []string{"controller"}),
		queue: newQueueProvider(),
		cronJobSkew: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cronjob_controller_job_creation_skew_duration_seconds",
			Help:    "Time between when a cronjob is scheduled to be run, and when the corresponding job is created",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
	}
	m.sliceAdded = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "endpoint_slice_controller", Name: "endpoints_added_per_sync",
		Help: "Number of endpoints added on each Service sync", Buckets: prometheus.ExponentialBuckets(2, 2, 15),
	})
	m.sliceRemoved = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "endpoint_slice_controller", Name: "endpoints_removed_per_sync",
		Help: "Number of endpoints removed on each Service sync", Buckets: prometheus.ExponentialBuckets(2, 2, 15),
	})
	m.sliceChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "endpoint_slice_controller", Name: "changes",
		Help: "Number of EndpointSlice changes",
	}, []string{"operation"})
	m.sliceSyncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "endpoint_slice_controller", Name: "syncs",
		Help: "Number of EndpointSlice syncs",
	}, []string{"result"})
	m.sliceChangeToWrite = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "skiff_endpoint_slice_controller_change_to_write_duration_seconds",
		Help:    "From a Service's endpoints.kubernetes.io/last-change-trigger-time (the pod or Service change) to the EndpointSlice writes that carry it",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300},
	})
	reg.MustRegister(m.syncTotal, m.syncDuration, m.cronJobSkew, m.sliceAdded, m.sliceRemoved, m.sliceChanges, m.sliceSyncs, m.sliceChangeToWrite)
	m.queue.register(reg)
	return m
}

// ObserveCronJobCreationSkew records how late after its schedule time a
// CronJob's Job was created.
func (m *Metrics) ObserveCronJobCreationSkew(skew time.Duration) {
	if m == nil {
		return
	}
	m.cronJobSkew.Observe(skew.Seconds())
}

// EndpointSliceSync is what one sync of the EndpointSlice controller did.
type EndpointSliceSync struct {
	// Result is upstream's label: "success", "stale" (the slice cache
	// behind the controller's writes) or "error".
	Result                    string
	Added, Removed            int
	Creates, Updates, Deletes int
	// ChangeToWrite is the time from the trigger time to the writes (0:
	// nothing written, or no trigger time).
	ChangeToWrite time.Duration
}

// ObserveEndpointSliceSync records one sync of the EndpointSlice controller.
func (m *Metrics) ObserveEndpointSliceSync(s EndpointSliceSync) {
	if m == nil {
		return
	}
	m.sliceSyncs.WithLabelValues(s.Result).Inc()
	if s.Result != "success" {
		return
	}
	m.sliceAdded.Observe(float64(s.Added))
	m.sliceRemoved.Observe(float64(s.Removed))
	for op, n := range map[string]int{"create": s.Creates, "update": s.Updates, "delete": s.Deletes} {
		if n > 0 {
			m.sliceChanges.WithLabelValues(op).Add(float64(n))
		}
	}
	if s.ChangeToWrite > 0 {
		m.sliceChangeToWrite.Observe(s.ChangeToWrite.Seconds())
	}
}

// ObserveSync records one sync of controller that started at start.
func (m *Metrics) ObserveSync(controller string, start time.Time, err error) {
	if m == nil {
		return
	}
	result := "success"
	if err != nil {
		result = "error"
	}
	m.syncTotal.WithLabelValues(controller, result).Inc()
	m.syncDuration.WithLabelValues(controller).Observe(time.Since(start).Seconds())
}

// QueueConfig is the configuration for a rate-limited work queue named name
// whose metrics land on this registry.
func QueueConfig[T comparable](m *Metrics, name string) workqueue.TypedRateLimitingQueueConfig[T] {
	cfg := workqueue.TypedRateLimitingQueueConfig[T]{Name: name}
	if m != nil {
		cfg.MetricsProvider = m.queue
	}
	return cfg
}

// queueProvider implements workqueue.MetricsProvider with the series
// upstream's component-base registers.
type queueProvider struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinished     *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

func newQueueProvider() *queueProvider {
	durations := prometheus.ExponentialBuckets(10e-9, 10, 10)
	return &queueProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_depth", Help: "Current depth of workqueue",
		}, []string{"name"}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_adds_total", Help: "Total number of adds handled by workqueue",
		}, []string{"name"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workqueue_queue_duration_seconds", Help: "How long in seconds an item stays in workqueue before being requested.",
			Buckets: durations,
		}, []string{"name"}),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workqueue_work_duration_seconds", Help: "How long in seconds processing an item from workqueue takes.",
			Buckets: durations,
		}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_unfinished_work_seconds",
			Help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		}, []string{"name"}),
		longestRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_longest_running_processor_seconds",
			Help: "How many seconds has the longest running processor for workqueue been running.",
		}, []string{"name"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_retries_total", Help: "Total number of retries handled by workqueue",
		}, []string{"name"}),
	}
}

func (p *queueProvider) register(reg prometheus.Registerer) {
	reg.MustRegister(p.depth, p.adds, p.latency, p.workDuration, p.unfinished, p.longestRunning, p.retries)
}

func (p *queueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}
func (p *queueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}
func (p *queueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}
func (p *queueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}
func (p *queueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}
func (p *queueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longestRunning.WithLabelValues(name)
}
func (p *queueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}

var _ workqueue.MetricsProvider = (*queueProvider)(nil)
