package server

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"skiff.dev/apiserver/pkg/aggregator"
	"skiff.dev/apiserver/pkg/metricsserver"
)

// TestDiscoveryGroupsYieldToAnAPIService: discovery lists the built-in
// metrics.k8s.io until an APIService with a service serves its
// group-version; then the group is the aggregator's alone.
func TestDiscoveryGroupsYieldToAnAPIService(t *testing.T) {
	agg := aggregator.New(aggregator.Config{})
	d := discoveryGroups{agg: agg, metrics: metricsserver.New(metricsserver.Options{})}
	count := func() (n int, priority int32) {
		for _, g := range d.Groups() {
			if g.Name == "metrics.k8s.io" {
				n, priority = n+1, g.Priority
			}
		}
		return n, priority
	}
	if n, p := count(); n != 1 || p != 100 {
		t.Fatalf("built in: %d groups of priority %d, want one of 100", n, p)
	}
	if rl, ok := d.ResourceList("metrics.k8s.io", "v1beta1"); !ok || len(rl.APIResources) != 2 {
		t.Fatalf("built in: resource list %+v %v", rl, ok)
	}
	if _, ok := d.ResourceList("metrics.k8s.io", "v1"); ok {
		t.Error("an unknown version was listed")
	}

	agg.Apply(watch.Event{Type: watch.Added, Object: &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io"},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: "metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: 100, VersionPriority: 100,
			Service: &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server"},
		},
	}})
	if n, _ := count(); n != 1 {
		t.Fatalf("with an APIService: %d metrics.k8s.io groups, want the aggregator's only", n)
	}
	if _, ok := d.ResourceList("metrics.k8s.io", "v1beta1"); ok {
		t.Error("with an APIService not yet available: the built-in resource list was served")
	}

	off := discoveryGroups{agg: aggregator.New(aggregator.Config{})}
	if len(off.Groups()) != 0 {
		t.Errorf("--metric-resolution=0: groups %+v, want none", off.Groups())
	}
}
