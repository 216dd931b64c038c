package stats

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// The resource metrics, with upstream's names, help and labels
// (pkg/kubelet/metrics/collectors/resource_metrics.go).
var (
	nodeCPUUsageDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryUsageDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node in bytes", nil, nil)
	containerCPUUsageDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryUsageDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerStartTimeDesc = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	podCPUUsageDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryUsageDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// cAdvisor's series, with its labels: id is the cgroup, name the runtime's
// container ID; the pod's own cgroup has an empty container, and the
// node's root cgroup has id "/" and nothing else.
var (
	cadvisorLabels  = []string{"container", "id", "image", "name", "namespace", "pod"}
	cadvisorCPUDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed in seconds.", append([]string{"cpu"}, cadvisorLabels...), nil)
	cadvisorWorkingSetDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set in bytes.", cadvisorLabels, nil)
	cadvisorMemoryUsageDesc = prometheus.NewDesc("container_memory_usage_bytes",
		"Current memory usage in bytes, including all memory regardless of when it was accessed", cadvisorLabels, nil)
	cadvisorRSSDesc = prometheus.NewDesc("container_memory_rss",
		"Size of RSS in bytes.", cadvisorLabels, nil)
)

// resourceCollector turns a snapshot into the resource metrics; snap is
// nil when reading failed.
type resourceCollector struct{ snap *Snapshot }

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUUsageDesc, nodeMemoryUsageDesc, containerCPUUsageDesc, containerMemoryUsageDesc,
		containerStartTimeDesc, podCPUUsageDesc, podMemoryUsageDesc, scrapeErrorDesc, resourceScrapeErrorDesc} {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	failed := 0.0
	if c.snap == nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
	ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, failed)
	if c.snap == nil {
		return
	}
	n := c.snap.Node.Usage
	ch <- at(n.Time, nodeCPUUsageDesc, prometheus.CounterValue, seconds(n.CPU))
	ch <- at(n.Time, nodeMemoryUsageDesc, prometheus.GaugeValue, float64(n.WorkingSet))
	for _, p := range c.snap.Pods {
		ns, name := p.Pod.Namespace, p.Pod.Name
		ch <- at(p.Usage.Time, podCPUUsageDesc, prometheus.CounterValue, seconds(p.Usage.CPU), name, ns)
		ch <- at(p.Usage.Time, podMemoryUsageDesc, prometheus.GaugeValue, float64(p.Usage.WorkingSet), name, ns)
		for _, cs := range p.Containers {
			cn := cs.Container.Name()
			ch <- at(cs.Usage.Time, containerCPUUsageDesc, prometheus.CounterValue, seconds(cs.Usage.CPU), cn, name, ns)
			ch <- at(cs.Usage.Time, containerMemoryUsageDesc, prometheus.GaugeValue, float64(cs.Usage.WorkingSet), cn, name, ns)
			if st := cs.Container.StartedAt; !st.IsZero() {
				ch <- at(st, containerStartTimeDesc, prometheus.GaugeValue, float64(st.UnixNano())/float64(time.Second), cn, name, ns)
			}
		}
	}
}

// cadvisorCollector turns a snapshot into cAdvisor's series.
type cadvisorCollector struct{ snap *Snapshot }

func (c cadvisorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cadvisorCPUDesc, cadvisorWorkingSetDesc, cadvisorMemoryUsageDesc, cadvisorRSSDesc} {
		ch <- d
	}
}

func (c cadvisorCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(u Usage, labels ...string) {
		ch <- at(u.Time, cadvisorCPUDesc, prometheus.CounterValue, seconds(u.CPU), append([]string{"total"}, labels...)...)
		ch <- at(u.Time, cadvisorWorkingSetDesc, prometheus.GaugeValue, float64(u.WorkingSet), labels...)
		ch <- at(u.Time, cadvisorMemoryUsageDesc, prometheus.GaugeValue, float64(u.Memory), labels...)
		ch <- at(u.Time, cadvisorRSSDesc, prometheus.GaugeValue, float64(u.RSS), labels...)
	}
	emit(c.snap.Node.Usage, "", "/", "", "", "", "")
	for _, p := range c.snap.Pods {
		emit(p.Usage, "", p.Cgroup, "", "", p.Pod.Namespace, p.Pod.Name)
		for _, cs := range p.Containers {
			emit(cs.Usage, cs.Container.Name(), cs.Cgroup, cs.Container.Image, cs.Container.ID, p.Pod.Namespace, p.Pod.Name)
		}
	}
}

// at is a constant metric stamped with the time it was read, as
// upstream's resource metrics and cAdvisor's are.
func at(t time.Time, d *prometheus.Desc, vt prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	return prometheus.NewMetricWithTimestamp(t, prometheus.MustNewConstMetric(d, vt, v, labels...))
}

func seconds(ns uint64) float64 { return float64(ns) / float64(time.Second) }

// ResourceMetricsHandler serves GET /metrics/resource. A failed reading
// is reported as scrape_error 1, as upstream's.
func (p *Provider) ResourceMetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		snap, err := p.Snapshot(r.Context())
		if err != nil {
			klog.FromContext(r.Context()).Error(err, "Reading the resource metrics")
			snap = nil
		}
		serveCollector(w, r, resourceCollector{snap: snap})
	})
}

// CadvisorMetricsHandler serves GET /metrics/cadvisor.
func (p *Provider) CadvisorMetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		snap, err := p.Snapshot(r.Context())
		if err != nil {
			http.Error(w, "reading the cgroups: "+err.Error(), http.StatusInternalServerError)
			return
		}
		serveCollector(w, r, cadvisorCollector{snap: snap})
	})
}

// serveCollector serves one collector's metrics in the format the client
// asks for.
func serveCollector(w http.ResponseWriter, r *http.Request, c prometheus.Collector) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
}
