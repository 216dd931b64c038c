package endpointslicemirroring

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	svcIdx   cache.Indexer
	epIdx    cache.Indexer
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(), recorder: record.NewFakeRecorder(100)}
	// The fake tracker does not generate names as the API server does.
	var n atomic.Int64
	f.client.PrependReactor("create", "endpointslices", func(action core.Action) (bool, runtime.Object, error) {
		s := action.(core.CreateAction).GetObject().(*discoveryv1.EndpointSlice)
		if s.Name == "" && s.GenerateName != "" {
			s.Name = fmt.Sprintf("%s%05d", s.GenerateName, n.Add(1))
		}
		s.UID = types.UID("uid-" + s.Name)
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(f.client, 0)
	c1 := factory.Core().V1()
	c, err := NewController(f.client, c1.Endpoints(), c1.Services(), factory.Discovery().V1().EndpointSlices(), f.recorder, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	f.svcIdx, f.epIdx = c1.Services().Informer().GetIndexer(), c1.Endpoints().Informer().GetIndexer()
	return f
}

func (f *fixture) sync(key string) {
	f.t.Helper()
	if err := f.c.sync(context.Background(), key); err != nil {
		f.t.Fatalf("sync %s: %v", key, err)
	}
}

func (f *fixture) slices(ns string) []discoveryv1.EndpointSlice {
	f.t.Helper()
	list, err := f.client.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

func service(name string, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Name: "example", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

func customEndpoints(name string, ips ...string) *corev1.Endpoints {
	var addrs []corev1.EndpointAddress
	for _, ip := range ips {
		addrs = append(addrs, corev1.EndpointAddress{IP: ip})
	}
	return &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("ep-" + name),
			Labels:      map[string]string{"app": "custom"},
			Annotations: map[string]string{"note": "kept", corev1.EndpointsLastChangeTriggerTime: "2026-01-01T00:00:00Z"}},
		Subsets: []corev1.EndpointSubset{{
			Addresses: addrs,
			Ports:     []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}},
		}},
	}
}

func addresses(s discoveryv1.EndpointSlice) []string {
	var out []string
	for _, e := range s.Endpoints {
		out = append(out, strings.Join(e.Addresses, "+"))
	}
	return out
}

// The conformance test's sequence: a Service without selector and its
// custom Endpoints are mirrored into one slice; an update of the
// Endpoints updates that same slice; deleting the Endpoints deletes it.
func TestMirrorCreateUpdateDelete(t *testing.T) {
	f := newFixture(t, Options{})
	_ = f.svcIdx.Add(service("custom", nil))
	ep := customEndpoints("custom", "10.1.2.3")
	_ = f.epIdx.Add(ep)
	f.sync("ns/custom")

	got := f.slices("ns")
	if len(got) != 1 {
		t.Fatalf("slices after the first sync: %d, want 1", len(got))
	}
	s := got[0]
	if s.AddressType != discoveryv1.AddressTypeIPv4 || len(s.Ports) != 1 || *s.Ports[0].Port != 80 || *s.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("slice type %s ports %v", s.AddressType, s.Ports)
	}
	if a := addresses(s); len(a) != 1 || a[0] != "10.1.2.3" || !*s.Endpoints[0].Conditions.Ready {
		t.Errorf("endpoints %v, want one ready 10.1.2.3", s.Endpoints)
	}
	if s.Labels[discoveryv1.LabelServiceName] != "custom" || s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels["app"] != "custom" {
		t.Errorf("labels %v", s.Labels)
	}
	if s.Annotations["note"] != "kept" || s.Annotations[corev1.EndpointsLastChangeTriggerTime] != "" {
		t.Errorf("annotations %v: want the Endpoints' own without the trigger time", s.Annotations)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Endpoints" || s.OwnerReferences[0].UID != ep.UID {
		t.Errorf("owner references %v", s.OwnerReferences)
	}
	if !strings.HasPrefix(s.Name, "custom-") {
		t.Errorf("slice name %q, want the custom- prefix", s.Name)
	}

	// Nothing changed: no write.
	f.client.ClearActions()
	f.sync("ns/custom")
	for _, a := range f.client.Actions() {
		if a.GetVerb() != "list" {
			t.Errorf("a sync without change did %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}

	upd := ep.DeepCopy()
	upd.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "10.2.3.4"}}
	_ = f.epIdx.Update(upd)
	f.sync("ns/custom")
	got = f.slices("ns")
	if len(got) != 1 || got[0].Name != s.Name {
		t.Fatalf("slices after the update: %v, want the one slice %s", got, s.Name)
	}
	if a := addresses(got[0]); len(a) != 1 || a[0] != "10.2.3.4" {
		t.Errorf("endpoints after the update %v, want 10.2.3.4", a)
	}

	_ = f.epIdx.Delete(upd)
	f.sync("ns/custom")
	if got := f.slices("ns"); len(got) != 0 {
		t.Errorf("slices after the Endpoints' deletion: %d, want 0", len(got))
	}
}

// Endpoints not to be mirrored: the Service has a selector (the endpoints
// controllers own its Endpoints and slices), there is no Service, the
// skip-mirror label, a leader-election lock. Slices mirrored before are
// deleted; slices of other controllers are left alone.
func TestNotMirrored(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
		mod  func(*corev1.Endpoints)
	}{
		{"selector", service("e", map[string]string{"app": "x"}), nil},
		{"no service", nil, nil},
		{"skip-mirror", service("e", nil), func(ep *corev1.Endpoints) { ep.Labels[discoveryv1.LabelSkipMirror] = "true" }},
		{"leader election", service("e", nil), func(ep *corev1.Endpoints) {
			ep.Annotations["control-plane.alpha.kubernetes.io/leader"] = "{}"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			ep := customEndpoints("e", "10.0.0.1")
			// A slice mirrored earlier, and one of the EndpointSlice
			// controller for the same Service.
			_ = f.svcIdx.Add(service("e", nil))
			_ = f.epIdx.Add(ep)
			f.sync("ns/e")
			other := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "e-other",
				Labels: map[string]string{discoveryv1.LabelServiceName: "e", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
				AddressType: discoveryv1.AddressTypeIPv4}
			if _, err := f.client.DiscoveryV1().EndpointSlices("ns").Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}

			_ = f.svcIdx.Delete(service("e", nil))
			if tc.svc != nil {
				_ = f.svcIdx.Add(tc.svc)
			}
			if tc.mod != nil {
				ep = ep.DeepCopy()
				tc.mod(ep)
				_ = f.epIdx.Update(ep)
			}
			f.sync("ns/e")
			got := f.slices("ns")
			if len(got) != 1 || got[0].Name != "e-other" {
				t.Errorf("slices %v, want only e-other", got)
			}
		})
	}
}

// Several subsets, both address families, not-ready addresses, invalid
// IPs and the per-subset limit.
func TestMirrorSubsets(t *testing.T) {
	f := newFixture(t, Options{MaxEndpointsPerSubset: 2})
	_ = f.svcIdx.Add(service("m", nil))
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: "ep-m"},
		Subsets: []corev1.EndpointSubset{
			{
				Addresses:         []corev1.EndpointAddress{{IP: "10.0.0.1", Hostname: "a"}, {IP: "fd00::1"}},
				NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.0.0.2"}},
				Ports:             []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
			},
			{
				Addresses: []corev1.EndpointAddress{{IP: "not-an-ip"}, {IP: "10.0.0.9"}},
				Ports:     []corev1.EndpointPort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
			},
		},
	}
	_ = f.epIdx.Add(ep)
	f.sync("ns/m")

	got := map[string][]string{}
	for _, s := range f.slices("ns") {
		k := fmt.Sprintf("%s/%s/%d", s.AddressType, *s.Ports[0].Name, *s.Ports[0].Port)
		for _, e := range s.Endpoints {
			a := e.Addresses[0]
			if !*e.Conditions.Ready {
				a += "(not ready)"
			}
			if e.Hostname != nil {
				a += "(" + *e.Hostname + ")"
			}
			got[k] = append(got[k], a)
		}
	}
	// Subset 1 has three addresses, limit 2: the ready ones first.
	want := map[string][]string{
		"IPv4/http/80": {"10.0.0.1(a)"},
		"IPv6/http/80": {"fd00::1"},
		"IPv4/dns/53":  {"10.0.0.9"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mirrored %v, want %v", got, want)
	}
	events := map[string]bool{}
	for len(f.recorder.Events) > 0 {
		e := <-f.recorder.Events
		events[strings.Fields(e)[1]] = true
	}
	if !events[InvalidIPAddress] || !events[TooManyAddressesToMirror] {
		t.Errorf("events %v, want %s and %s", events, InvalidIPAddress, TooManyAddressesToMirror)
	}

	// The ports change: the slices are reused under their names.
	before := map[string]bool{}
	for _, s := range f.slices("ns") {
		before[s.Name] = true
	}
	ep = ep.DeepCopy()
	ep.Subsets = ep.Subsets[:1]
	ep.Subsets[0].Ports[0].Port = 8080
	_ = f.epIdx.Update(ep)
	f.sync("ns/m")
	after := f.slices("ns")
	if len(after) != 2 {
		t.Fatalf("slices after the port change: %d, want 2", len(after))
	}
	for _, s := range after {
		if !before[s.Name] || *s.Ports[0].Port != 8080 {
			t.Errorf("slice %s port %d: want an earlier slice updated to 8080", s.Name, *s.Ports[0].Port)
		}
	}
}

func TestOptions(t *testing.T) {
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	c1 := factory.Core().V1()
	if _, err := NewController(client, c1.Endpoints(), c1.Services(), factory.Discovery().V1().EndpointSlices(), nil, nil,
		Options{MaxEndpointsPerSubset: 1001}); err == nil {
		t.Error("1001 endpoints per subset accepted")
	}
}
