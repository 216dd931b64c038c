package eviction

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the eviction manager's metrics, with upstream's names.
type Metrics struct {
	// Evictions counts pod evictions by eviction signal
	// (kubelet_evictions{eviction_signal}).
	Evictions *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg (when not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "evictions",
			Help: "Cumulative number of pod evictions by eviction signal",
		}, []string{"eviction_signal"}),
	}
	if reg != nil {
		reg.MustRegister(m.Evictions)
	}
	return m
}
