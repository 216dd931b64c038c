package aggregator

import (
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
)

// state is what the feeds keep: the APIServices by name, the Services and
// EndpointSlices by namespace/name, and the resource list each remote
// APIService's last passed discovery check read.
type state struct {
	mu       sync.RWMutex
	apis     map[string]*apiregistrationv1.APIService
	services map[string]*corev1.Service
	slices   map[string]*discoveryv1.EndpointSlice
	// byServiceSlices indexes slices by the Service they belong to
	// (namespace/name of their kubernetes.io/service-name label).
	byServiceSlices map[string]map[string]*discoveryv1.EndpointSlice
	discovery       map[string]*metav1.APIResourceList
}

func newState() *state {
	return &state{
		apis: map[string]*apiregistrationv1.APIService{}, services: map[string]*corev1.Service{},
		slices: map[string]*discoveryv1.EndpointSlice{}, byServiceSlices: map[string]map[string]*discoveryv1.EndpointSlice{},
		discovery: map[string]*metav1.APIResourceList{},
	}
}

func key(ns, name string) string { return ns + "/" + name }

// remote returns the APIService with a service that serves gv, if any.
func (s *state) remote(gv schema.GroupVersion) (*apiregistrationv1.APIService, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.apis[gv.Version+"."+gv.Group]
	if !ok || a.Spec.Service == nil {
		return nil, false
	}
	return a, true
}

// remoteGroup returns the APIServices with a service in group, ordered by
// versionPriority as upstream (highest first, then kube-aware version
// order).
func (s *state) remoteGroup(group string) []*apiregistrationv1.APIService {
	for _, g := range s.remoteGroups() {
		if g[0].Spec.Group == group {
			return g
		}
	}
	return nil
}

// remoteGroups returns the groups served by APIServices with a service,
// each group's APIServices by version priority, the groups by
// groupPriorityMinimum as upstream's SortedByGroupAndVersion.
func (s *state) remoteGroups() [][]*apiregistrationv1.APIService {
	s.mu.RLock()
	var all []*apiregistrationv1.APIService
	remoteGroup := map[string]bool{}
	for _, a := range s.apis {
		if a.Spec.Service != nil {
			remoteGroup[a.Spec.Group] = true
		}
	}
	for _, a := range s.apis {
		// A group is aggregated when some version of it is served
		// remotely; its local versions, if any, are served here.
		if remoteGroup[a.Spec.Group] && a.Spec.Group != "" {
			all = append(all, a)
		}
	}
	s.mu.RUnlock()
	return helper.SortedByGroupAndVersion(all)
}

func (s *state) byService(ns, name string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for n, a := range s.apis {
		if svc := a.Spec.Service; svc != nil && svc.Namespace == ns && svc.Name == name {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func (s *state) apiService(name string) (*apiregistrationv1.APIService, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.apis[name]
	return a, ok
}

func (s *state) service(ns, name string) (*corev1.Service, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	svc, ok := s.services[key(ns, name)]
	return svc, ok
}

// endpointSlices of the Service ns/name, by their kubernetes.io/service-name label.
func (s *state) endpointSlices(ns, name string) []*discoveryv1.EndpointSlice {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*discoveryv1.EndpointSlice
	for _, es := range s.byServiceSlices[key(ns, name)] {
		out = append(out, es)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *state) setDiscovery(name string, list *metav1.APIResourceList) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if list == nil {
		delete(s.discovery, name)
		return
	}
	s.discovery[name] = list
}

func (s *state) cachedDiscovery(name string) (*metav1.APIResourceList, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l, ok := s.discovery[name]
	return l, ok
}

// apply records one watch event of an APIService, Service or EndpointSlice.
func (s *state) apply(ev watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	del := ev.Type == watch.Deleted
	switch o := ev.Object.(type) {
	case *apiregistrationv1.APIService:
		if del {
			delete(s.apis, o.Name)
			delete(s.discovery, o.Name)
		} else {
			s.apis[o.Name] = o
		}
	case *corev1.Service:
		if del {
			delete(s.services, key(o.Namespace, o.Name))
		} else {
			s.services[key(o.Namespace, o.Name)] = o
		}
	case *discoveryv1.EndpointSlice:
		k := key(o.Namespace, o.Name)
		if prev, ok := s.slices[k]; ok {
			s.unindexSlice(prev)
		}
		if del {
			delete(s.slices, k)
		} else {
			s.slices[k] = o
			s.indexSlice(o)
		}
	}
}

func (s *state) indexSlice(es *discoveryv1.EndpointSlice) {
	svc := key(es.Namespace, es.Labels[discoveryv1.LabelServiceName])
	if s.byServiceSlices[svc] == nil {
		s.byServiceSlices[svc] = map[string]*discoveryv1.EndpointSlice{}
	}
	s.byServiceSlices[svc][es.Name] = es
}

func (s *state) unindexSlice(es *discoveryv1.EndpointSlice) {
	svc := key(es.Namespace, es.Labels[discoveryv1.LabelServiceName])
	delete(s.byServiceSlices[svc], es.Name)
	if len(s.byServiceSlices[svc]) == 0 {
		delete(s.byServiceSlices, svc)
	}
}
