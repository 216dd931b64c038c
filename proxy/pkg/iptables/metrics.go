package iptables

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the proxy's, under upstream kube-proxy's names, on the
// component's own registry.
type Metrics struct {
	SyncDuration         prometheus.Histogram
	FullSyncDuration     prometheus.Histogram
	PartialSyncDuration  prometheus.Histogram
	NetworkProgramming   prometheus.Histogram
	LastSyncTimestamp    prometheus.Gauge
	IPTablesRules        *prometheus.GaugeVec
	SyncFailures         prometheus.Counter
	ConntrackEntriesDone prometheus.Counter
	// RulesWrittenDropped counts the RulesWritten events not recorded
	// (over the limits).
	RulesWrittenDropped prometheus.Counter
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	syncBuckets := prometheus.ExponentialBuckets(0.001, 2, 15)
	npBuckets := []float64{0.25, 0.5}
	for i := 1; i <= 59; i++ {
		npBuckets = append(npBuckets, float64(i))
	}
	for i := 60; i <= 115; i += 5 {
		npBuckets = append(npBuckets, float64(i))
	}
	for i := 120; i <= 300; i += 30 {
		npBuckets = append(npBuckets, float64(i))
	}
	m := &Metrics{
		SyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_duration_seconds",
			Help: "SyncProxyRules latency in seconds", Buckets: syncBuckets,
		}),
		FullSyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "sync_full_proxy_rules_duration_seconds",
			Help: "SyncProxyRules latency in seconds for full resyncs", Buckets: syncBuckets,
		}),
		PartialSyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "sync_partial_proxy_rules_duration_seconds",
			Help: "SyncProxyRules latency in seconds for partial resyncs", Buckets: syncBuckets,
		}),
		NetworkProgramming: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "network_programming_duration_seconds",
			Help:    "In Cluster Network Programming Latency in seconds (from an EndpointSlice's last-change-trigger-time to its rules in the kernel)",
			Buckets: npBuckets,
		}),
		LastSyncTimestamp: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_last_timestamp_seconds",
			Help: "The last time proxy rules were successfully synced",
		}),
		IPTablesRules: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_iptables_total",
			Help: "Total number of iptables rules owned by the proxy",
		}, []string{"table"}),
		SyncFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_iptables_restore_failures_total",
			Help: "Cumulative proxy iptables restore failures",
		}),
		ConntrackEntriesDone: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_conntrack_entries_deleted_total",
			Help: "Stale UDP conntrack entries deleted",
		}),
		RulesWrittenDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skiff_proxy_rules_written_events_dropped_total",
			Help: "RulesWritten events (a Service's new endpoints programmed) not recorded, over the proxy's limit of events",
		}),
	}
	reg.MustRegister(m.RulesWrittenDropped)
	reg.MustRegister(m.SyncDuration, m.FullSyncDuration, m.PartialSyncDuration, m.NetworkProgramming,
		m.LastSyncTimestamp, m.IPTablesRules, m.SyncFailures, m.ConntrackEntriesDone)
	return m
}
