package aggregator

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Config is what the aggregator needs from the server.
type Config struct {
	// ProxyClientCert is the front-proxy client certificate presented to
	// backends (upstream's --proxy-client-cert-file and key); nil sends none.
	ProxyClientCert *tls.Certificate
	// UpdateStatus writes an APIService's Available condition through the
	// status subresource.
	UpdateStatus func(ctx context.Context, name string, cond apiregistrationv1.APIServiceCondition) error
	// ResyncInterval is how often every remote APIService is checked again
	// even without an event (upstream: 30s); a backend that stops answering
	// is noticed within it.
	ResyncInterval time.Duration
	// DiscoveryTimeout bounds the discovery check (upstream: 5s).
	DiscoveryTimeout time.Duration
	// Now is the clock of the conditions' lastTransitionTime.
	Now func() time.Time
	// Unavailable, when set, is 1 for each APIService marked unavailable
	// (aggregator_unavailable_apiservice); UnavailableTotal counts each
	// marking by reason (aggregator_unavailable_apiservice_total).
	Unavailable      *prometheus.GaugeVec
	UnavailableTotal *prometheus.CounterVec
}

// Aggregator serves and watches the aggregated APIs.
type Aggregator struct {
	cfg        Config
	st         *state
	queue      workqueue.TypedRateLimitingInterface[string]
	transports *transports
}

// New builds an Aggregator; feed it with Apply and Reset, then Run it.
func New(cfg Config) *Aggregator {
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = 30 * time.Second
	}
	if cfg.DiscoveryTimeout <= 0 {
		cfg.DiscoveryTimeout = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Aggregator{
		cfg: cfg, st: newState(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "apiservice-availability"}),
		transports: newTransports(cfg.ProxyClientCert),
	}
}

// Apply records a watch event of an APIService, a Service or an
// EndpointSlice and queues the APIServices it concerns for a check.
func (a *Aggregator) Apply(ev watch.Event) {
	a.st.apply(ev)
	switch o := ev.Object.(type) {
	case *apiregistrationv1.APIService:
		if ev.Type == watch.Deleted && a.cfg.Unavailable != nil {
			a.cfg.Unavailable.DeleteLabelValues(o.Name)
		}
		a.queue.Add(o.Name)
	case *corev1.Service:
		for _, n := range a.st.byService(o.Namespace, o.Name) {
			a.queue.Add(n)
		}
	case *discoveryv1.EndpointSlice:
		if svc := o.Labels[discoveryv1.LabelServiceName]; svc != "" {
			for _, n := range a.st.byService(o.Namespace, svc) {
				a.queue.Add(n)
			}
		}
	}
}

// ResetAPIServices, ResetServices and ResetEndpointSlices forget what a
// feed had sent, before it sends the whole state again.
func (a *Aggregator) ResetAPIServices() {
	a.st.mu.Lock()
	defer a.st.mu.Unlock()
	a.st.apis = map[string]*apiregistrationv1.APIService{}
}

func (a *Aggregator) ResetServices() {
	a.st.mu.Lock()
	defer a.st.mu.Unlock()
	a.st.services = map[string]*corev1.Service{}
}

func (a *Aggregator) ResetEndpointSlices() {
	a.st.mu.Lock()
	defer a.st.mu.Unlock()
	a.st.slices = map[string]*discoveryv1.EndpointSlice{}
	a.st.byServiceSlices = map[string]map[string]*discoveryv1.EndpointSlice{}
}

// Group is an aggregated API group as discovery lists it, with the
// priority that orders it among the others.
type Group struct {
	metav1.APIGroup
	Priority int32
}

// Groups are the groups some APIService with a service serves, in
// upstream's order, each with its versions by versionPriority (the first
// is the preferred one). As upstream's legacy /apis, a group is listed
// whether or not its APIServices are available.
func (a *Aggregator) Groups() []Group {
	var out []Group
	for _, apis := range a.st.remoteGroups() {
		g := Group{APIGroup: metav1.APIGroup{Name: apis[0].Spec.Group}}
		for _, api := range apis {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{
				GroupVersion: api.Spec.Group + "/" + api.Spec.Version, Version: api.Spec.Version,
			})
			if api.Spec.GroupPriorityMinimum > g.Priority {
				g.Priority = api.Spec.GroupPriorityMinimum
			}
		}
		g.PreferredVersion = g.Versions[0]
		out = append(out, g)
	}
	return out
}

// ResourceList is the resource list the last passed discovery check of
// the remote APIService of group/version read; false while it is not
// available.
func (a *Aggregator) ResourceList(group, version string) (*metav1.APIResourceList, bool) {
	api, ok := a.st.apiService(version + "." + group)
	if !ok || api.Spec.Service == nil || !available(api) {
		return nil, false
	}
	return a.st.cachedDiscovery(api.Name)
}

func available(api *apiregistrationv1.APIService) bool {
	for _, c := range api.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}

// Handler serves the aggregated group-versions and passes every other
// request to next.
func (a *Aggregator) Handler(next http.Handler) http.Handler {
	return &proxyHandler{a: a, next: next}
}
