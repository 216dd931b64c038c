package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics of one API server.
type Metrics struct {
	Registry           *prometheus.Registry
	RequestTotal       *prometheus.CounterVec
	RequestDuration    *prometheus.HistogramVec
	RegisteredWatchers *prometheus.GaugeVec
	EtcdDuration       *prometheus.HistogramVec
	// WatchCacheEvents counts the events each watch cache received.
	WatchCacheEvents *prometheus.CounterVec
	// The repair of Service allocations, with upstream's names: errors
	// found by type (leak, repair, duplicate, outOfRange, invalid), and
	// passes that failed.
	ClusterIPRepairErrors          *prometheus.CounterVec
	ClusterIPRepairReconcileErrors prometheus.Counter
	NodePortRepairErrors           *prometheus.CounterVec
	NodePortRepairReconcileErrors  prometheus.Counter
	// The aggregator's availability controller, with upstream's names:
	// 1 for each APIService marked unavailable, and how often each was
	// marked so, by reason.
	AggregatorUnavailable      *prometheus.GaugeVec
	AggregatorUnavailableTotal *prometheus.CounterVec
}

// New registers the metrics on a new registry.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		RequestTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		RequestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		RegisteredWatchers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_registered_watchers",
			Help: "Number of currently registered watchers for a given resources",
		}, []string{"group", "version", "kind"}),
		EtcdDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "etcd_request_duration_seconds",
			Help:    "Etcd request latency in seconds for each operation and object type.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, []string{"operation", "type"}),
		WatchCacheEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_cache_events_received_total",
			Help: "Counter of events received in watch cache broken by resource type.",
		}, []string{"group", "resource"}),
		ClusterIPRepairErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_clusterip_repair_ip_errors_total",
			Help: "Number of errors detected on clusterips by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown, invalid",
		}, []string{"type"}),
		ClusterIPRepairReconcileErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_clusterip_repair_reconcile_errors_total",
			Help: "Number of reconciliation failures on the clusterip repair reconcile loop",
		}),
		NodePortRepairErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_nodeport_repair_port_errors_total",
			Help: "Number of errors detected on ports by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown",
		}, []string{"type"}),
		NodePortRepairReconcileErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_nodeport_repair_reconcile_errors_total",
			Help: "Number of reconciliation failures on the nodeport repair reconcile loop",
		}),
		AggregatorUnavailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "aggregator_unavailable_apiservice",
			Help: "Gauge of APIServices which are marked as unavailable broken down by APIService name.",
		}, []string{"name"}),
		AggregatorUnavailableTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aggregator_unavailable_apiservice_total",
			Help: "Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
		}, []string{"name", "reason"}),
	}
	m.Registry.MustRegister(m.RequestTotal, m.RequestDuration, m.RegisteredWatchers, m.EtcdDuration, m.WatchCacheEvents,
		m.ClusterIPRepairErrors, m.ClusterIPRepairReconcileErrors, m.NodePortRepairErrors, m.NodePortRepairReconcileErrors,
		m.AggregatorUnavailable, m.AggregatorUnavailableTotal,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveRequest records one finished request.
func (m *Metrics) ObserveRequest(verb, dryRun, group, version, resource, subresource, scope string, code int, elapsed time.Duration) {
	m.RequestTotal.WithLabelValues(verb, dryRun, group, version, resource, subresource, scope, "apiserver", strconv.Itoa(code)).Inc()
	if verb != "WATCH" {
		m.RequestDuration.WithLabelValues(verb, dryRun, group, version, resource, subresource, scope, "apiserver").Observe(elapsed.Seconds())
	}
}

// ObserveEtcd records one etcd call.
func (m *Metrics) ObserveEtcd(operation, typ string, elapsed time.Duration) {
	m.EtcdDuration.WithLabelValues(operation, typ).Observe(elapsed.Seconds())
}
