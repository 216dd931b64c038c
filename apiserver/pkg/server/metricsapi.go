package server

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/aggregator"
	"skiff.dev/apiserver/pkg/endpoints"
	"skiff.dev/apiserver/pkg/metricsserver"
	"skiff.dev/apiserver/pkg/openapi"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
)

// newMetricsAPI builds the built-in metrics.k8s.io (package
// metricsserver): it scrapes the kubelets through the server's kubelet
// client and reads nodes and pods from the watch caches. nil when
// --metric-resolution is 0.
func (s *Server) newMetricsAPI(o *Options) *metricsserver.Server {
	if o.MetricResolution <= 0 {
		return nil
	}
	return metricsserver.New(metricsserver.Options{
		Resolution: o.MetricResolution,
		Scraper:    metricsserver.KubeletScraper{Client: s.handler.Kubelet},
		Nodes: func(ctx context.Context) ([]*corev1.Node, error) {
			obj, err := s.store("", "nodes").List(ctx, "", storage.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return nil, err
			}
			items := obj.(*corev1.NodeList).Items
			out := make([]*corev1.Node, len(items))
			for i := range items {
				out[i] = &items[i]
			}
			return out, nil
		},
		Pods: func(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
			obj, err := s.store("", "pods").List(ctx, namespace, storage.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return nil, err
			}
			items := obj.(*corev1.PodList).Items
			out := make([]*corev1.Pod, len(items))
			for i := range items {
				out[i] = &items[i]
			}
			return out, nil
		},
		Registerer: s.metrics.Registry,
	})
}

// withMetricsAPI serves metrics.k8s.io's resources in front of next.
func (s *Server) withMetricsAPI(next http.Handler) http.Handler {
	if s.metricsAPI == nil {
		return next
	}
	return s.metricsAPI.Handler(next)
}

// discoveryGroups are the aggregated groups with the built-in
// metrics.k8s.io among them, unless an APIService with a service serves
// that group-version (then the aggregator proxies it, metrics-server
// answers and discovery lists what it says).
type discoveryGroups struct {
	agg     *aggregator.Aggregator
	metrics *metricsserver.Server
}

var _ endpoints.AggregatedGroups = discoveryGroups{}

func (d discoveryGroups) Groups() []aggregator.Group {
	gs := d.agg.Groups()
	if d.metrics == nil || d.remoteMetrics(gs) {
		return gs
	}
	return append(gs, aggregator.Group{APIGroup: d.metrics.Group(), Priority: metricsserver.GroupPriority})
}

func (d discoveryGroups) ResourceList(group, version string) (*metav1.APIResourceList, bool) {
	if l, ok := d.agg.ResourceList(group, version); ok {
		return l, ok
	}
	gv := metricsserver.SchemeGroupVersion
	if d.metrics == nil || group != gv.Group || version != gv.Version || d.remoteMetrics(d.agg.Groups()) {
		return nil, false
	}
	return d.metrics.ResourceList(), true
}

func (d discoveryGroups) remoteMetrics(gs []aggregator.Group) bool {
	for _, g := range gs {
		for _, v := range g.Versions {
			if v.GroupVersion == metricsserver.SchemeGroupVersion.String() {
				return true
			}
		}
	}
	return false
}

// openAPIResources are resources for the OpenAPI documents, with the
// built-in metrics.k8s.io's NodeMetrics and PodMetrics (get and list, as
// metrics-server serves them and publishes them in its OpenAPI, which
// upstream's aggregator merges) when it is on.
func (s *Server) openAPIResources(resources []*registry.Resource) []openapi.Resource {
	out := registry.OpenAPIResources(resources)
	if s.metricsAPI == nil {
		return out
	}
	gv := metricsserver.SchemeGroupVersion
	for _, r := range s.metricsAPI.ResourceList().APIResources {
		out = append(out, openapi.Resource{Group: gv.Group, Version: gv.Version, Kind: r.Kind, Resource: r.Name,
			Namespaced: r.Namespaced, Verbs: r.Verbs})
	}
	return out
}
