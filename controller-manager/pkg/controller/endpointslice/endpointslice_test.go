package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

var now = time.Unix(1_700_000_000, 0).UTC()

type fixture struct {
	t        testing.TB
	client   *fake.Clientset
	c        *Controller
	svcIdx   cache.Indexer
	podIdx   cache.Indexer
	nodeIdx  cache.Indexer
	sliceIdx cache.Indexer
	recorder *record.FakeRecorder
	rv       atomic.Int64
}

// newFixture builds the controller on a fake clientset whose creates and
// updates of slices get a name (generateName), a UID and a rising
// resourceVersion, as the API server gives them.
func newFixture(t testing.TB, opts Options, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(), recorder: record.NewFakeRecorder(1000)}
	f.rv.Store(100)
	f.client.PrependReactor("create", "endpointslices", func(action core.Action) (bool, runtime.Object, error) {
		s := action.(core.CreateAction).GetObject().(*discoveryv1.EndpointSlice)
		n := f.rv.Add(1)
		if s.Name == "" {
			s.Name = fmt.Sprintf("%s%05d", s.GenerateName, n)
		}
		s.UID = types.UID("uid-" + s.Name)
		s.ResourceVersion = strconv.FormatInt(n, 10)
		s.Generation = 1
		return false, nil, nil
	})
	f.client.PrependReactor("update", "endpointslices", func(action core.Action) (bool, runtime.Object, error) {
		s := action.(core.UpdateAction).GetObject().(*discoveryv1.EndpointSlice)
		s.ResourceVersion = strconv.FormatInt(f.rv.Add(1), 10)
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(f.client, 0)
	core1 := factory.Core().V1()
	sliceInf := factory.Discovery().V1().EndpointSlices()
	c, err := NewController(f.client, core1.Pods(), core1.Services(), core1.Nodes(), sliceInf, f.recorder, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	f.svcIdx, f.podIdx = core1.Services().Informer().GetIndexer(), core1.Pods().Informer().GetIndexer()
	f.nodeIdx, f.sliceIdx = core1.Nodes().Informer().GetIndexer(), sliceInf.Informer().GetIndexer()
	for _, o := range objs {
		f.add(o)
	}
	return f
}

// add puts o into its informer cache (and the fake API for slices).
func (f *fixture) add(o runtime.Object) {
	switch o := o.(type) {
	case *corev1.Service:
		_ = f.svcIdx.Add(o)
	case *corev1.Pod:
		_ = f.podIdx.Add(o)
	case *corev1.Node:
		_ = f.nodeIdx.Add(o)
	case *discoveryv1.EndpointSlice:
		_ = f.sliceIdx.Add(o)
		if err := f.client.Tracker().Add(o); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) sync(svc *corev1.Service) error {
	f.client.ClearActions()
	return f.c.sync(context.Background(), svc.Namespace+"/"+svc.Name)
}

// writes are the create/update/delete actions of the last sync.
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.client.Actions() {
		switch a.GetVerb() {
		case "create", "update", "delete":
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	return out
}

// slices returns the slices in the fake API, by name.
func (f *fixture) slices() []*discoveryv1.EndpointSlice {
	f.t.Helper()
	l, err := f.client.DiscoveryV1().EndpointSlices("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*discoveryv1.EndpointSlice
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// observe copies the API's slices into the informer cache, as the watch
// would.
func (f *fixture) observe() {
	for _, o := range f.sliceIdx.List() {
		_ = f.sliceIdx.Delete(o)
	}
	for _, s := range f.slices() {
		_ = f.sliceIdx.Add(s)
	}
}

func newService(name string, mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
			CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)), Labels: map[string]string{"team": "web"}},
		Spec: corev1.ServiceSpec{
			Selector:   map[string]string{"app": name},
			ClusterIP:  "10.96.0.10",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

func newNode(name, zone string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if zone != "" {
		n.Labels = map[string]string{corev1.LabelTopologyZone: zone}
	}
	return n
}

// newPod is a Running, Ready pod of app on node-1 with ip.
func newPod(name, app, ip string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
			Labels: map[string]string{"app": app}, ResourceVersion: "1"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func terminating(p *corev1.Pod) {
	ts := metav1.NewTime(now)
	p.DeletionTimestamp = &ts
}

// epSummary is an endpoint in a comparable form.
type epSummary struct {
	Pod, Addrs, Node, Zone, Hostname string
	Ready, Serving, Terminating      bool
}

func summarize(ep discoveryv1.Endpoint) epSummary {
	s := epSummary{Addrs: fmt.Sprint(ep.Addresses), Ready: ptr.Deref(ep.Conditions.Ready, false),
		Serving: ptr.Deref(ep.Conditions.Serving, false), Terminating: ptr.Deref(ep.Conditions.Terminating, false),
		Node: ptr.Deref(ep.NodeName, ""), Zone: ptr.Deref(ep.Zone, ""), Hostname: ptr.Deref(ep.Hostname, "")}
	if ep.TargetRef != nil {
		s.Pod = ep.TargetRef.Kind + ":" + ep.TargetRef.Name
	}
	return s
}

// portsOf renders a slice's ports as "name/proto/port" strings.
func portsOf(s *discoveryv1.EndpointSlice) []string {
	var out []string
	for _, p := range s.Ports {
		out = append(out, fmt.Sprintf("%s/%s/%d", ptr.Deref(p.Name, ""), ptr.Deref(p.Protocol, ""), ptr.Deref(p.Port, 0)))
	}
	sort.Strings(out)
	return out
}

func TestEndpointConditions(t *testing.T) {
	tests := []struct {
		name string
		svc  *corev1.Service
		pod  *corev1.Pod
		want []epSummary // nil: no endpoint
	}{
		{
			name: "ready",
			svc:  newService("web"),
			pod:  newPod("p", "web", "10.244.1.5"),
			want: []epSummary{{Pod: "Pod:p", Addrs: "[10.244.1.5]", Node: "node-1", Zone: "zone-a", Ready: true, Serving: true}},
		},
		{
			name: "not ready",
			svc:  newService("web"),
			pod:  newPod("p", "web", "10.244.1.5", notReady),
			want: []epSummary{{Pod: "Pod:p", Addrs: "[10.244.1.5]", Node: "node-1", Zone: "zone-a"}},
		},
		{
			name: "terminating and ready: serving, not ready",
			svc:  newService("web"),
			pod:  newPod("p", "web", "10.244.1.5", terminating),
			want: []epSummary{{Pod: "Pod:p", Addrs: "[10.244.1.5]", Node: "node-1", Zone: "zone-a", Serving: true, Terminating: true}},
		},
		{
			name: "publishNotReadyAddresses: a not-ready pod is ready",
			svc:  newService("web", func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			pod:  newPod("p", "web", "10.244.1.5", notReady),
			want: []epSummary{{Pod: "Pod:p", Addrs: "[10.244.1.5]", Node: "node-1", Zone: "zone-a", Ready: true}},
		},
		{
			name: "publishNotReadyAddresses: a terminating pod is ready",
			svc:  newService("web", func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			pod:  newPod("p", "web", "10.244.1.5", terminating),
			want: []epSummary{{Pod: "Pod:p", Addrs: "[10.244.1.5]", Node: "node-1", Zone: "zone-a", Ready: true, Serving: true, Terminating: true}},
		},
		{
			name: "headless: hostname when the subdomain names the Service",
			svc:  newService("db", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }),
			pod: newPod("db-0", "db", "10.244.1.7", func(p *corev1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db"
			}),
			want: []epSummary{{Pod: "Pod:db-0", Addrs: "[10.244.1.7]", Node: "node-1", Zone: "zone-a", Hostname: "db-0", Ready: true, Serving: true}},
		},
		{
			name: "hostname but another subdomain: no hostname",
			svc:  newService("db"),
			pod: newPod("db-0", "db", "10.244.1.7", func(p *corev1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain = "db-0", "other"
			}),
			want: []epSummary{{Pod: "Pod:db-0", Addrs: "[10.244.1.7]", Node: "node-1", Zone: "zone-a", Ready: true, Serving: true}},
		},
		{
			name: "IPv6 pod in an IPv4 Service: skipped",
			svc:  newService("web"),
			pod:  newPod("p", "web", "fd00::5"),
		},
		{
			name: "dual-stack pod in an IPv4 Service: its IPv4 address",
			svc:  newService("web"),
			pod: newPod("p", "web", "10.244.1.5", func(p *corev1.Pod) {
				p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: "fd00::5"})
			}),
			want: []epSummary{{Pod: "Pod:p", Addrs: "[10.244.1.5]", Node: "node-1", Zone: "zone-a", Ready: true, Serving: true}},
		},
		{
			name: "succeeded pod: excluded",
			svc:  newService("web"),
			pod:  newPod("p", "web", "10.244.1.5", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		},
		{
			name: "failed pod: excluded",
			svc:  newService("web"),
			pod:  newPod("p", "web", "10.244.1.5", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
		},
		{
			name: "pod without an IP: excluded",
			svc:  newService("web"),
			pod: newPod("p", "web", "", func(p *corev1.Pod) {
				p.Status.PodIPs = nil
			}),
		},
		{
			name: "pod not selected: excluded",
			svc:  newService("web"),
			pod:  newPod("p", "other", "10.244.1.5"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{}, tt.svc, tt.pod, newNode("node-1", "zone-a"))
			if err := f.sync(tt.svc); err != nil {
				t.Fatal(err)
			}
			got := f.slices()
			if len(got) != 1 {
				t.Fatalf("slices = %d, want 1", len(got))
			}
			var eps []epSummary
			for _, ep := range got[0].Endpoints {
				eps = append(eps, summarize(ep))
			}
			if fmt.Sprint(eps) != fmt.Sprint(tt.want) {
				t.Errorf("endpoints = %+v\nwant        %+v", eps, tt.want)
			}
		})
	}
}

func TestSliceMetadata(t *testing.T) {
	svc := newService("web")
	f := newFixture(t, Options{}, svc, newPod("p", "web", "10.244.1.5"), newNode("node-1", ""))
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	got := f.slices()
	if len(got) != 1 {
		t.Fatalf("slices = %d, want 1", len(got))
	}
	s := got[0]
	ref := metav1.GetControllerOf(s)
	if s.GenerateName != "web-" || s.AddressType != discoveryv1.AddressTypeIPv4 || ref == nil || ref.UID != svc.UID ||
		ref.Kind != "Service" || ref.APIVersion != "v1" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("slice meta = %+v", s.ObjectMeta)
	}
	wantLabels := map[string]string{"team": "web", discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: ManagedBy}
	if fmt.Sprint(s.Labels) != fmt.Sprint(wantLabels) {
		t.Errorf("labels = %v, want %v", s.Labels, wantLabels)
	}
	if got := portsOf(s); fmt.Sprint(got) != "[http/TCP/8080]" {
		t.Errorf("ports = %v", got)
	}
	// First sync of the Service: its creation time.
	if v := s.Annotations[corev1.EndpointsLastChangeTriggerTime]; v != svc.CreationTimestamp.UTC().Format(time.RFC3339Nano) {
		t.Errorf("trigger time = %q, want the Service's creation", v)
	}
	if ep := s.Endpoints[0]; ep.Zone != nil {
		t.Errorf("zone = %q, want none (node without a zone label)", *ep.Zone)
	}
}

func TestHeadlessLabelAndPortlessService(t *testing.T) {
	svc := newService("db", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone; s.Spec.Ports = nil })
	f := newFixture(t, Options{}, svc, newPod("db-0", "db", "10.244.1.7"), newNode("node-1", ""))
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	got := f.slices()
	if len(got) != 1 || len(got[0].Ports) != 0 || len(got[0].Endpoints) != 1 {
		t.Fatalf("slices = %+v", got)
	}
	if v, ok := got[0].Labels[corev1.IsHeadlessService]; !ok || v != "" {
		t.Errorf("labels = %v, want the headless label", got[0].Labels)
	}
}

// Pods that resolve a named targetPort to different numbers go into
// different slices, one per port set.
func TestNamedPortsPerPod(t *testing.T) {
	svc := newService("web", func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}}
	})
	port := func(n int32) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = n }
	}
	f := newFixture(t, Options{}, svc, newNode("node-1", ""),
		newPod("a", "web", "10.244.1.1", port(8080)), newPod("b", "web", "10.244.1.2", port(8080)),
		newPod("c", "web", "10.244.1.3", port(9090)),
		// A pod without the named port serves none of the Service's ports.
		newPod("d", "web", "10.244.1.4", func(p *corev1.Pod) { p.Spec.Containers[0].Ports = nil }))
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range f.slices() {
		var pods []string
		for _, ep := range s.Endpoints {
			pods = append(pods, ep.TargetRef.Name)
		}
		sort.Strings(pods)
		got[fmt.Sprint(portsOf(s))] = pods
	}
	want := map[string][]string{"[http/TCP/8080]": {"a", "b"}, "[http/TCP/9090]": {"c"}, "[]": {"d"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("slices by ports = %v\nwant %v", got, want)
	}
}

func TestMaxEndpointsPerSlice(t *testing.T) {
	tests := []struct {
		name       string
		max        int32
		pods       int
		wantSlices []int
	}{
		{name: "101 pods, default 100: two slices", pods: 101, wantSlices: []int{100, 1}},
		{name: "100 pods: one slice", pods: 100, wantSlices: []int{100}},
		{name: "7 pods, max 3", max: 3, pods: 7, wantSlices: []int{3, 3, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := newService("web")
			objs := []runtime.Object{svc, newNode("node-1", "")}
			for i := range tt.pods {
				objs = append(objs, newPod(fmt.Sprintf("p%03d", i), "web", fmt.Sprintf("10.244.%d.%d", i/250, i%250+1)))
			}
			f := newFixture(t, Options{MaxEndpointsPerSlice: tt.max}, objs...)
			if err := f.sync(svc); err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, s := range f.slices() {
				sizes = append(sizes, len(s.Endpoints))
			}
			sort.Sort(sort.Reverse(sort.IntSlice(sizes)))
			if fmt.Sprint(sizes) != fmt.Sprint(tt.wantSlices) {
				t.Errorf("slice sizes = %v, want %v", sizes, tt.wantSlices)
			}
		})
	}
}

func TestNewControllerRejectsBadOptions(t *testing.T) {
	for _, opts := range []Options{{MaxEndpointsPerSlice: 1001}, {MaxEndpointsPerSlice: -1}, {BatchPeriod: -time.Second}} {
		factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
		c1 := factory.Core().V1()
		if _, err := NewController(fake.NewSimpleClientset(), c1.Pods(), c1.Services(), c1.Nodes(), factory.Discovery().V1().EndpointSlices(),
			record.NewFakeRecorder(1), nil, opts); err == nil {
			t.Errorf("options %+v: want an error", opts)
		}
	}
}

// A second sync with nothing changed writes nothing; a changed pod updates
// its slice in place; a pod gone leaves the placeholder-free slice set
// right.
func TestMinimalChurn(t *testing.T) {
	svc := newService("web")
	a, b := newPod("a", "web", "10.244.1.1"), newPod("b", "web", "10.244.1.2")
	f := newFixture(t, Options{}, svc, newNode("node-1", ""), a, b)
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); fmt.Sprint(w) != "[create endpointslices]" {
		t.Fatalf("first sync writes = %v", w)
	}
	f.observe()
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("unchanged input: writes = %v, want none", w)
	}
	before := f.slices()[0]

	// b turns not ready: the same slice is updated.
	b2 := b.DeepCopy()
	b2.ResourceVersion = "2"
	notReady(b2)
	b2.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now)
	_ = f.podIdx.Update(b2)
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); fmt.Sprint(w) != "[update endpointslices]" {
		t.Fatalf("pod not ready: writes = %v", w)
	}
	after := f.slices()
	if len(after) != 1 || after[0].Name != before.Name {
		t.Fatalf("slices = %v, want %s updated in place", after, before.Name)
	}
	for _, ep := range after[0].Endpoints {
		if ep.TargetRef.Name == "b" && ptr.Deref(ep.Conditions.Ready, true) {
			t.Errorf("b still ready")
		}
	}
	// The trigger time is b's readiness change.
	if v := after[0].Annotations[corev1.EndpointsLastChangeTriggerTime]; v != now.Format(time.RFC3339Nano) {
		t.Errorf("trigger time = %q, want %q", v, now.Format(time.RFC3339Nano))
	}

	// Both pods go: the slice is kept as the empty placeholder (updated,
	// not deleted and recreated).
	f.observe()
	_ = f.podIdx.Delete(a)
	_ = f.podIdx.Delete(b2)
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); fmt.Sprint(w) != "[update endpointslices]" {
		t.Fatalf("pods gone: writes = %v", w)
	}
	final := f.slices()
	if len(final) != 1 || final[0].Name != before.Name || len(final[0].Endpoints) != 0 || len(final[0].Ports) != 0 {
		t.Errorf("slices = %+v, want %s as an empty placeholder", final, before.Name)
	}
	f.observe()
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("placeholder unchanged: writes = %v, want none", w)
	}
}

func TestSlicesOfOthersUntouched(t *testing.T) {
	svc := newService("web")
	foreign := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-custom", Namespace: "default", UID: "foreign", ResourceVersion: "5",
			Labels: map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "someone-else"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.1"}}},
	}
	f := newFixture(t, Options{}, svc, newNode("node-1", ""), newPod("a", "web", "10.244.1.1"), foreign)
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "update" || a.GetVerb() == "delete" {
			t.Errorf("action %s %s on another manager's slice", a.GetVerb(), a.GetResource().Resource)
		}
	}
	got, err := f.client.DiscoveryV1().EndpointSlices("default").Get(context.Background(), "web-custom", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != "5" || len(got.Endpoints) != 1 {
		t.Errorf("foreign slice = %+v, %v", got, err)
	}
	if n := len(f.slices()); n != 2 {
		t.Errorf("slices = %d, want the foreign one and ours", n)
	}
}

func TestServicesLeftAlone(t *testing.T) {
	tests := []struct {
		name string
		svc  *corev1.Service
	}{
		{"no selector", newService("web", func(s *corev1.Service) { s.Spec.Selector = nil })},
		{"empty selector", newService("web", func(s *corev1.Service) { s.Spec.Selector = map[string]string{} })},
		{"ExternalName", newService("web", func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalName, s.Spec.ClusterIP = corev1.ServiceTypeExternalName, "example.com", ""
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{}, tt.svc, newNode("node-1", ""), newPod("a", "web", "10.244.1.1"))
			if err := f.sync(tt.svc); err != nil {
				t.Fatal(err)
			}
			if w := f.writes(); len(w) != 0 {
				t.Errorf("writes = %v, want none", w)
			}
		})
	}
}

func TestServiceGoneForgetsIt(t *testing.T) {
	svc := newService("web")
	f := newFixture(t, Options{}, svc, newNode("node-1", ""), newPod("a", "web", "10.244.1.1"))
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	_ = f.svcIdx.Delete(svc)
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	// Slices go with the Service through the garbage collector.
	if w := f.writes(); len(w) != 0 {
		t.Errorf("writes = %v, want none", w)
	}
	if len(f.c.tracker.byService) != 0 || len(f.c.triggerTimes.states) != 0 {
		t.Errorf("trackers still hold the Service")
	}
}

// A sync whose cache does not show the controller's own last write waits
// instead of acting on it.
func TestStaleCache(t *testing.T) {
	svc := newService("web")
	f := newFixture(t, Options{}, svc, newNode("node-1", ""), newPod("a", "web", "10.244.1.1"))
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	// The created slice is not in the cache yet.
	if err := f.sync(svc); !errors.Is(err, errStaleCache) {
		t.Fatalf("created slice missing from the cache: err = %v, want errStaleCache", err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("stale sync wrote %v", w)
	}
	f.observe()
	old := f.slices()[0]
	// An update, then the cache still holding the version before it.
	p := newPod("b", "web", "10.244.1.2")
	_ = f.podIdx.Add(p)
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(svc); !errors.Is(err, errStaleCache) {
		t.Fatalf("cache older than the update: err = %v, want errStaleCache", err)
	}
	// The informer event of the controller's own write starts no sync; a
	// later write by someone else does.
	cur := f.slices()[0]
	if f.c.tracker.ShouldSync(cur) {
		t.Error("own write: ShouldSync = true")
	}
	if f.c.tracker.ShouldSync(old) {
		t.Error("a version older than the controller's write: ShouldSync = true")
	}
	other := cur.DeepCopy()
	other.ResourceVersion = strconv.FormatInt(f.rv.Add(1), 10)
	if !f.c.tracker.ShouldSync(other) {
		t.Error("someone else's later write: ShouldSync = false")
	}
	f.observe()
	if err := f.sync(svc); err != nil {
		t.Fatalf("cache caught up: %v", err)
	}
}

// The event handlers queue the right Services.
func TestPodEventsQueueServices(t *testing.T) {
	web, api := newService("web"), newService("api")
	f := newFixture(t, Options{}, web, api, newService("headless-no-selector", func(s *corev1.Service) { s.Spec.Selector = nil }))
	p := newPod("a", "web", "10.244.1.1")
	f.c.addPod(p)
	if got := drain(f.c); fmt.Sprint(got) != "[default/web]" {
		t.Errorf("add: queued %v", got)
	}
	// A change endpoints do not show: nothing.
	p2 := p.DeepCopy()
	p2.ResourceVersion = "2"
	p2.Annotations = map[string]string{"x": "y"}
	f.c.updatePod(p, p2)
	if got := drain(f.c); len(got) != 0 {
		t.Errorf("annotation change: queued %v", got)
	}
	// Relabelled from web to api: both.
	p3 := p2.DeepCopy()
	p3.ResourceVersion = "3"
	p3.Labels = map[string]string{"app": "api"}
	f.c.updatePod(p2, p3)
	if got := drain(f.c); fmt.Sprint(got) != "[default/api default/web]" {
		t.Errorf("relabel: queued %v", got)
	}
	// Not ready: its Service.
	p4 := p3.DeepCopy()
	p4.ResourceVersion = "4"
	notReady(p4)
	f.c.updatePod(p3, p4)
	if got := drain(f.c); fmt.Sprint(got) != "[default/api]" {
		t.Errorf("readiness: queued %v", got)
	}
	f.c.deletePod(cache.DeletedFinalStateUnknown{Key: "default/a", Obj: p4})
	if got := drain(f.c); fmt.Sprint(got) != "[default/api]" {
		t.Errorf("delete: queued %v", got)
	}
}

// drain returns the keys queued now (sorted) and empties the queue.
func drain(c *Controller) []string {
	var out []string
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		out = append(out, k)
		c.queue.Done(k)
		c.queue.Forget(k)
	}
	slices.Sort(out)
	return out
}

func TestFailedWriteRecordsEvent(t *testing.T) {
	svc := newService("web")
	f := newFixture(t, Options{}, svc, newNode("node-1", ""), newPod("a", "web", "10.244.1.1"))
	f.client.PrependReactor("create", "endpointslices", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd unavailable")
	})
	if err := f.sync(svc); err == nil {
		t.Fatal("want an error")
	}
	select {
	case ev := <-f.recorder.Events:
		if want := "Warning FailedToUpdateEndpointSlices"; len(ev) < len(want) || ev[:len(want)] != want {
			t.Errorf("event = %q", ev)
		}
	default:
		t.Error("no event")
	}
}

func TestPodOnMissingNode(t *testing.T) {
	svc := newService("web")
	f := newFixture(t, Options{}, svc, newPod("a", "web", "10.244.1.1"), newPod("b", "web", "10.244.1.2", func(p *corev1.Pod) {
		p.Spec.NodeName = "node-2"
	}), newNode("node-2", ""))
	// node-1 is missing: a is left out and the sync fails (to retry), b
	// is written.
	if err := f.sync(svc); err == nil {
		t.Error("want an error for the pod on a missing node")
	}
	got := f.slices()
	if len(got) != 1 || len(got[0].Endpoints) != 1 || got[0].Endpoints[0].TargetRef.Name != "b" {
		t.Errorf("slices = %+v, want only b", got)
	}
}

// With a batch period, a pod change reaches the queue only after it.
func TestBatchPeriod(t *testing.T) {
	const period = 300 * time.Millisecond
	f := newFixture(t, Options{BatchPeriod: period}, newService("web"))
	start := time.Now()
	f.c.addPod(newPod("a", "web", "10.244.1.1"))
	if n := f.c.queue.Len(); n != 0 {
		t.Fatalf("queued at once: %d", n)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return f.c.queue.Len() == 1, nil
	})
	if err != nil {
		t.Fatalf("never queued: %v", err)
	}
	if waited := time.Since(start); waited < period {
		t.Errorf("queued after %s, before the %s batch period", waited, period)
	}
	// A Service change is not batched.
	f.c.enqueueService(newService("api"))
	if got := drain(f.c); fmt.Sprint(got) != "[default/api default/web]" {
		t.Errorf("queued %v", got)
	}
}

// A dual-stack Service gets a slice per family; a family the Service
// drops loses its slices.
func TestDualStack(t *testing.T) {
	svc := newService("web", func(s *corev1.Service) {
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	})
	pod := newPod("a", "web", "10.244.1.1", func(p *corev1.Pod) {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: "fd00:0:0::1"})
	})
	f := newFixture(t, Options{}, svc, pod, newNode("node-1", ""))
	if err := f.sync(svc); err != nil {
		t.Fatal(err)
	}
	got := map[discoveryv1.AddressType]string{}
	for _, s := range f.slices() {
		for _, ep := range s.Endpoints {
			got[s.AddressType] += fmt.Sprint(ep.Addresses)
		}
	}
	// The IPv6 address is written in its canonical form.
	if want := "map[IPv4:[10.244.1.1] IPv6:[fd00::1]]"; fmt.Sprint(got) != want {
		t.Fatalf("addresses by type = %v, want %s", got, want)
	}
	f.observe()
	v4only := svc.DeepCopy()
	v4only.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	_ = f.svcIdx.Update(v4only)
	if err := f.sync(v4only); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); fmt.Sprint(w) != "[delete endpointslices]" {
		t.Errorf("IPv6 dropped: writes = %v, want one delete", w)
	}
	if s := f.slices(); len(s) != 1 || s[0].AddressType != discoveryv1.AddressTypeIPv4 {
		t.Errorf("slices = %+v, want the IPv4 one", s)
	}
}
