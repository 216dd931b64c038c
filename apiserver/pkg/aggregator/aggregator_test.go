package aggregator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/authn"
)

func apiService(name, group, version string, svc *apiregistrationv1.ServiceReference, groupPrio, versionPrio int32) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiregistrationv1.APIServiceSpec{Group: group, Version: version, Service: svc,
			GroupPriorityMinimum: groupPrio, VersionPriority: versionPrio},
	}
}

func service(ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: ports}}
}

func slice(name string, ready *bool, port int32, portName string, addrs ...string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "svc"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port)}},
	}
}

func TestResolve(t *testing.T) {
	ref := &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc", Port: ptr.To[int32](443)}
	https := corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)}
	for _, tc := range []struct {
		name       string
		objects    []watch.Event
		wantHost   string
		wantReason string
	}{
		{name: "no service", wantReason: ReasonServiceNotFound},
		{name: "service without the port", objects: []watch.Event{{Type: watch.Added, Object: service(corev1.ServicePort{Name: "http", Port: 80})}},
			wantReason: ReasonServicePortError},
		{name: "no endpoints", objects: []watch.Event{{Type: watch.Added, Object: service(https)}}, wantReason: ReasonMissingEndpoints},
		{name: "endpoints not ready", objects: []watch.Event{{Type: watch.Added, Object: service(https)}, {Type: watch.Added, Object: slice("a", ptr.To(false), 8443, "https", "10.0.0.1")}},
			wantReason: ReasonMissingEndpoints},
		{name: "endpoints of another port name", objects: []watch.Event{{Type: watch.Added, Object: service(https)}, {Type: watch.Added, Object: slice("a", nil, 8080, "http", "10.0.0.1")}},
			wantReason: ReasonMissingEndpoints},
		{name: "a ready endpoint", objects: []watch.Event{{Type: watch.Added, Object: service(https)}, {Type: watch.Added, Object: slice("a", ptr.To(true), 8443, "https", "10.0.0.1")}},
			wantHost: "10.0.0.1:8443"},
		{name: "ready unset counts as ready", objects: []watch.Event{{Type: watch.Added, Object: service(https)}, {Type: watch.Added, Object: slice("a", nil, 8443, "https", "10.0.0.2")}},
			wantHost: "10.0.0.2:8443"},
		{name: "a slice moved to another service", objects: []watch.Event{{Type: watch.Added, Object: service(https)}, {Type: watch.Added, Object: slice("a", nil, 8443, "https", "10.0.0.2")},
			{Type: watch.Modified, Object: func() *discoveryv1.EndpointSlice {
				es := slice("a", nil, 8443, "https", "10.0.0.2")
				es.Labels[discoveryv1.LabelServiceName] = "other"
				return es
			}()}}, wantReason: ReasonMissingEndpoints},
		{name: "a deleted slice", objects: []watch.Event{{Type: watch.Added, Object: service(https)}, {Type: watch.Added, Object: slice("a", nil, 8443, "https", "10.0.0.2")},
			{Type: watch.Deleted, Object: slice("a", nil, 8443, "https", "10.0.0.2")}}, wantReason: ReasonMissingEndpoints},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Config{})
			for _, ev := range tc.objects {
				a.Apply(ev)
			}
			u, err := a.resolve(apiService("v1.g", "g", "v1", ref, 100, 10))
			if tc.wantReason != "" {
				re, ok := err.(*resolveError)
				if !ok || re.reason != tc.wantReason {
					t.Fatalf("resolve = %v, %v; want reason %s", u, err, tc.wantReason)
				}
				return
			}
			if err != nil || u.Host != tc.wantHost || u.Scheme != "https" {
				t.Fatalf("resolve = %v, %v; want https://%s", u, err, tc.wantHost)
			}
		})
	}
}

func TestSyncWritesTheAvailableCondition(t *testing.T) {
	var got []apiregistrationv1.APIServiceCondition
	a := New(Config{UpdateStatus: func(_ context.Context, name string, c apiregistrationv1.APIServiceCondition) error {
		got = append(got, c)
		return nil
	}})
	a.Apply(watch.Event{Type: watch.Added, Object: apiService("v1.apps", "apps", "v1", nil, 17800, 15)})
	a.Apply(watch.Event{Type: watch.Added, Object: apiService("v1.g", "g", "v1", &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc", Port: ptr.To[int32](443)}, 100, 10)})
	for _, n := range []string{"v1.apps", "v1.g"} {
		if err := a.sync(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0].Status != apiregistrationv1.ConditionTrue || got[0].Reason != ReasonLocal ||
		got[1].Status != apiregistrationv1.ConditionFalse || got[1].Reason != ReasonServiceNotFound || got[1].Message != `service/svc in "ns" is not present` {
		t.Fatalf("conditions = %+v", got)
	}
	// The same condition again is not written.
	api, _ := a.st.apiService("v1.apps")
	api = api.DeepCopy()
	api.Status.Conditions = []apiregistrationv1.APIServiceCondition{got[0]}
	a.Apply(watch.Event{Type: watch.Modified, Object: api})
	if err := a.sync(context.Background(), "v1.apps"); err != nil || len(got) != 2 {
		t.Fatalf("a second sync wrote %+v (%v)", got[2:], err)
	}
}

func TestGroupsOrder(t *testing.T) {
	a := New(Config{})
	svc := &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc"}
	for _, api := range []*apiregistrationv1.APIService{
		apiService("v1beta1.metrics.k8s.io", "metrics.k8s.io", "v1beta1", svc, 100, 100),
		apiService("v1alpha1.wardle.example.com", "wardle.example.com", "v1alpha1", svc, 2000, 10),
		apiService("v1beta1.wardle.example.com", "wardle.example.com", "v1beta1", svc, 1000, 20),
		apiService("v1.apps", "apps", "v1", nil, 17800, 15),
	} {
		a.Apply(watch.Event{Type: watch.Added, Object: api})
	}
	groups := a.Groups()
	var names []string
	for _, g := range groups {
		names = append(names, g.Name+"="+g.PreferredVersion.Version)
	}
	// Local groups are served by the resource table, not listed here; a
	// group's priority is its highest; versions by versionPriority.
	if strings.Join(names, " ") != "wardle.example.com=v1beta1 metrics.k8s.io=v1beta1" || groups[0].Priority != 2000 {
		t.Fatalf("groups = %v (%+v)", names, groups)
	}
}

func TestSetUserHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer secret")
	h.Set("Impersonate-User", "root")
	h.Set("X-Remote-User", "mallory")
	h.Set("X-Remote-Extra-Forged", "x")
	setUserHeaders(h, &authn.User{Name: "alice", UID: "u1", Groups: []string{"a", "b"}, Extra: map[string][]string{"scopes/read": {"yes"}}})
	want := http.Header{
		"X-Remote-User": {"alice"}, "X-Remote-Uid": {"u1"}, "X-Remote-Group": {"a", "b"},
		"X-Remote-Extra-Scopes%2Fread": {"yes"},
	}
	if len(h) != len(want) {
		t.Fatalf("headers = %v, want %v", h, want)
	}
	for k, v := range want {
		if strings.Join(h.Values(k), ",") != strings.Join(v, ",") {
			t.Errorf("%s = %v, want %v", k, h.Values(k), v)
		}
	}
}

func TestHandlerPassesOnWhatIsNotAggregated(t *testing.T) {
	a := New(Config{})
	a.Apply(watch.Event{Type: watch.Added, Object: apiService("v1.apps", "apps", "v1", nil, 17800, 15)})
	a.Apply(watch.Event{Type: watch.Added, Object: apiService("v1.g", "g", "v1", &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc"}, 100, 10)})
	passed := 0
	h := a.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed++ }))
	for _, tc := range []struct {
		method, path string
		passed       bool
		code         int
	}{
		{http.MethodGet, "/api/v1/pods", true, 0},
		{http.MethodGet, "/apis", true, 0},
		{http.MethodGet, "/apis/", true, 0},
		{http.MethodGet, "/apis/apps", true, 0},
		{http.MethodGet, "/apis/apps/v1/deployments", true, 0},
		{http.MethodPost, "/apis/g", true, 0},
		{http.MethodGet, "/apis/g", false, http.StatusOK},
		{http.MethodGet, "/apis/g/", false, http.StatusOK},
		{http.MethodGet, "/apis/g/v2", true, 0},
		// Not yet available: a 503 Status, not the backend.
		{http.MethodGet, "/apis/g/v1/things", false, http.StatusServiceUnavailable},
		{http.MethodGet, "/openapi/v3", true, 0},
		{http.MethodGet, "/openapi/v3/api/v1", true, 0},
		{http.MethodGet, "/openapi/v3/apis/apps/v1", true, 0},
		{http.MethodGet, "/openapi/v3/apis/g/v1", false, http.StatusServiceUnavailable},
	} {
		before := passed
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req = req.WithContext(authn.WithUser(req.Context(), &authn.User{Name: "u"}))
		h.ServeHTTP(rec, req)
		if got := passed > before; got != tc.passed || (!got && rec.Code != tc.code) {
			t.Errorf("%s %s: passed on %v (code %d), want %v (code %d)", tc.method, tc.path, got, rec.Code, tc.passed, tc.code)
		}
	}
}
