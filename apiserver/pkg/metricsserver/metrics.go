package metricsserver

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// scrapeMetrics are metrics-server's own metrics, with its names.
type scrapeMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	tick     prometheus.Histogram
}

func newScrapeMetrics(reg prometheus.Registerer) *scrapeMetrics {
	m := &scrapeMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metrics_server_kubelet_request_total", Help: "Number of requests sent to Kubelet API",
		}, []string{"success"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "metrics_server_kubelet_request_duration_seconds", Help: "Duration of requests to Kubelet API in seconds",
			Buckets: prometheus.DefBuckets,
		}, []string{"node"}),
		tick: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "metrics_server_manager_tick_duration_seconds", Help: "The total time spent collecting and storing metrics in seconds.",
			Buckets: prometheus.DefBuckets,
		}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.tick)
	}
	return m
}

func (m *scrapeMetrics) request(node string, d time.Duration, err error) {
	m.requests.WithLabelValues(strconv.FormatBool(err == nil)).Inc()
	m.duration.WithLabelValues(node).Observe(d.Seconds())
}

func (m *scrapeMetrics) cycle(d time.Duration) { m.tick.Observe(d.Seconds()) }
