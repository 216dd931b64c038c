package metricsserver

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/apiserver/pkg/kubeletclient"
)

// ResourceMetricsPath is the kubelet's resource metrics endpoint.
const ResourceMetricsPath = "/metrics/resource"

// KubeletScraper GETs /metrics/resource from a node's kubelet through the
// API server's kubelet client (its client certificate, its CA, its
// preferred address types).
type KubeletScraper struct {
	Client *kubeletclient.Client
}

// Scrape returns the body of the node's /metrics/resource.
func (k KubeletScraper) Scrape(ctx context.Context, node *corev1.Node) (io.ReadCloser, error) {
	loc, err := k.Client.Location(node, ResourceMetricsPath, nil)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := k.Client.Transport(false).RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", loc, resp.Status, body)
	}
	return resp.Body, nil
}

// decode adds what one node's /metrics/resource says to b: the node's
// point and its containers', each at the timestamp the kubelet gave it
// (the scrape's time when it gave none). Incomplete points (CPU without
// memory, or the reverse) are left out, as metrics-server's decoder does.
func decode(r io.Reader, nodeName string, scraped time.Time, b *batch) error {
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return fmt.Errorf("node %s: parsing %s: %w", nodeName, ResourceMetricsPath, err)
	}
	type key struct {
		pod       types.NamespacedName
		container string
	}
	type partial struct {
		point
		hasCPU, hasMemory bool
	}
	var node partial
	containers := map[key]*partial{}
	container := func(m *dto.Metric) *partial {
		k := key{pod: types.NamespacedName{Namespace: label(m, "namespace"), Name: label(m, "pod")}, container: label(m, "container")}
		p := containers[k]
		if p == nil {
			p = &partial{}
			containers[k] = p
		}
		return p
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			v, ok := value(m)
			if !ok || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			ts := scraped
			if m.TimestampMs != nil {
				ts = time.UnixMilli(m.GetTimestampMs())
			}
			switch name {
			case "node_cpu_usage_seconds_total":
				node.cpu, node.ts, node.hasCPU = uint64(v*1e9), ts, true
			case "node_memory_working_set_bytes":
				node.memory, node.hasMemory = uint64(v), true
			case "container_cpu_usage_seconds_total":
				p := container(m)
				p.cpu, p.ts, p.hasCPU = uint64(v*1e9), ts, true
			case "container_memory_working_set_bytes":
				p := container(m)
				p.memory, p.hasMemory = uint64(v), true
			case "container_start_time_seconds":
				sec, frac := math.Modf(v)
				container(m).start = time.Unix(int64(sec), int64(frac*1e9))
			}
		}
	}
	if node.hasCPU && node.hasMemory {
		b.nodes[nodeName] = node.point
	}
	for k, p := range containers {
		if !p.hasCPU || !p.hasMemory || k.pod.Name == "" || k.container == "" {
			continue
		}
		if b.pods[k.pod] == nil {
			b.pods[k.pod] = map[string]point{}
		}
		b.pods[k.pod][k.container] = p.point
	}
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}
