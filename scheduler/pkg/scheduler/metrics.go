package scheduler

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the scheduler's metrics, with upstream's names.
type Metrics struct {
	ScheduleAttempts  *prometheus.CounterVec
	AttemptDuration   *prometheus.HistogramVec
	PendingPods       *prometheus.GaugeVec
	SchedulingLatency *prometheus.HistogramVec
	// PodSchedulingSLIDuration is upstream's: from the pod's first
	// scheduling attempt to its binding, by the number of attempts.
	PodSchedulingSLIDuration *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ScheduleAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "scheduler", Name: "schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		}, []string{"result", "profile"}),
		AttemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result", "profile"}),
		PendingPods: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "scheduler", Name: "pending_pods",
			Help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods.",
		}, []string{"queue"}),
		SchedulingLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "scheduling_algorithm_duration_seconds",
			Help:    "Scheduling algorithm latency in seconds",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, nil),
		PodSchedulingSLIDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "pod_scheduling_sli_duration_seconds",
			Help:    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}, []string{"attempts"}),
	}
	reg.MustRegister(m.ScheduleAttempts, m.AttemptDuration, m.PendingPods, m.SchedulingLatency, m.PodSchedulingSLIDuration)
	return m
}

// SetPending updates scheduler_pending_pods.
func (m *Metrics) SetPending(active, backoff, unschedulable int) {
	m.PendingPods.WithLabelValues("active").Set(float64(active))
	m.PendingPods.WithLabelValues("backoff").Set(float64(backoff))
	m.PendingPods.WithLabelValues("unschedulable").Set(float64(unschedulable))
}

// attemptsLabel is upstream's attempts label: the count, or "15+".
func attemptsLabel(n int) string {
	if n >= 15 {
		return "15+"
	}
	return strconv.Itoa(n)
}
