package endpoints

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

var now = time.Unix(1_700_000_000, 0).UTC()

type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	svcIdx   cache.Indexer
	podIdx   cache.Indexer
	epIdx    cache.Indexer
	recorder *record.FakeRecorder
	rv       atomic.Int64
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(), recorder: record.NewFakeRecorder(100)}
	f.rv.Store(100)
	bump := func(action core.Action) (bool, runtime.Object, error) {
		var ep *corev1.Endpoints
		switch a := action.(type) {
		case core.CreateAction:
			ep = a.GetObject().(*corev1.Endpoints)
			ep.UID = types.UID("uid-" + ep.Name)
		case core.UpdateAction:
			ep = a.GetObject().(*corev1.Endpoints)
		}
		ep.ResourceVersion = strconv.FormatInt(f.rv.Add(1), 10)
		return false, nil, nil
	}
	f.client.PrependReactor("create", "endpoints", bump)
	f.client.PrependReactor("update", "endpoints", bump)
	factory := informers.NewSharedInformerFactory(f.client, 0)
	c1 := factory.Core().V1()
	c, err := NewController(f.client, c1.Pods(), c1.Services(), c1.Endpoints(), f.recorder, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	f.svcIdx, f.podIdx, f.epIdx = c1.Services().Informer().GetIndexer(), c1.Pods().Informer().GetIndexer(), c1.Endpoints().Informer().GetIndexer()
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Service:
			_ = f.svcIdx.Add(o)
		case *corev1.Pod:
			_ = f.podIdx.Add(o)
		case *corev1.Endpoints:
			_ = f.epIdx.Add(o)
			if err := f.client.Tracker().Add(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

func (f *fixture) sync(ns, name string) error {
	f.client.ClearActions()
	return f.c.sync(context.Background(), ns+"/"+name)
}

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

func (f *fixture) endpoints(ns, name string) *corev1.Endpoints {
	f.t.Helper()
	ep, err := f.client.CoreV1().Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("endpoints %s/%s: %v", ns, name, err)
	}
	return ep
}

// observe puts the API's Endpoints into the cache, as the watch would.
func (f *fixture) observe(ns, name string) {
	_ = f.epIdx.Update(f.endpoints(ns, name))
}

func newService(name string, mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
			CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)), Labels: map[string]string{"team": "web"}},
		Spec: corev1.ServiceSpec{
			Selector:   map[string]string{"app": name},
			ClusterIP:  "10.96.0.10",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

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
func port(n int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = n }
}

// render writes subsets as "ready=[ip(pod,host) ...] notReady=[...] ports=[name/proto/port]" per subset.
func render(subsets []corev1.EndpointSubset) string {
	addrs := func(as []corev1.EndpointAddress) string {
		var out []string
		for _, a := range as {
			s := a.IP + "(" + a.TargetRef.Name
			if a.Hostname != "" {
				s += "," + a.Hostname
			}
			if a.NodeName != nil {
				s += "@" + *a.NodeName
			}
			out = append(out, s+")")
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	var out []string
	for _, ss := range subsets {
		var ports []string
		for _, p := range ss.Ports {
			ports = append(ports, fmt.Sprintf("%s/%s/%d", p.Name, p.Protocol, p.Port))
		}
		out = append(out, fmt.Sprintf("ready=%s notReady=%s ports=%v", addrs(ss.Addresses), addrs(ss.NotReadyAddresses), ports))
	}
	return strings.Join(out, "; ")
}

func TestSubsets(t *testing.T) {
	tests := []struct {
		name string
		svc  *corev1.Service
		pods []*corev1.Pod
		want string
	}{
		{
			name: "ready and not ready",
			svc:  newService("web"),
			pods: []*corev1.Pod{newPod("a", "web", "10.244.1.1"), newPod("b", "web", "10.244.1.2", notReady)},
			want: "ready=[10.244.1.1(a@node-1)] notReady=[10.244.1.2(b@node-1)] ports=[http/TCP/8080]",
		},
		{
			name: "terminating pod left out",
			svc:  newService("web"),
			pods: []*corev1.Pod{newPod("a", "web", "10.244.1.1"), newPod("b", "web", "10.244.1.2", terminating)},
			want: "ready=[10.244.1.1(a@node-1)] notReady=[] ports=[http/TCP/8080]",
		},
		{
			name: "publishNotReadyAddresses: not-ready and terminating pods are ready",
			svc:  newService("web", func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			pods: []*corev1.Pod{newPod("a", "web", "10.244.1.1", notReady), newPod("b", "web", "10.244.1.2", terminating)},
			want: "ready=[10.244.1.1(a@node-1) 10.244.1.2(b@node-1)] notReady=[] ports=[http/TCP/8080]",
		},
		{
			name: "named port resolved per pod: two subsets",
			svc:  newService("web"),
			pods: []*corev1.Pod{newPod("a", "web", "10.244.1.1", port(8080)), newPod("b", "web", "10.244.1.2", port(9090)),
				newPod("c", "web", "10.244.1.3", port(8080))},
			// Subsets in the order of their hashes, as upstream sorts them.
			want: "ready=[10.244.1.1(a@node-1) 10.244.1.3(c@node-1)] notReady=[] ports=[http/TCP/8080]; ready=[10.244.1.2(b@node-1)] notReady=[] ports=[http/TCP/9090]",
		},
		{
			name: "headless with hostname, no ports",
			svc: newService("db", func(s *corev1.Service) {
				s.Spec.ClusterIP, s.Spec.Ports = corev1.ClusterIPNone, nil
			}),
			pods: []*corev1.Pod{newPod("db-0", "db", "10.244.1.7", func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" })},
			want: "ready=[10.244.1.7(db-0,db-0@node-1)] notReady=[] ports=[]",
		},
		{
			name: "succeeded, failed, IP-less and IPv6 pods left out",
			svc:  newService("web"),
			pods: []*corev1.Pod{
				newPod("a", "web", "10.244.1.1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
				newPod("b", "web", "10.244.1.2", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
				newPod("c", "web", "", func(p *corev1.Pod) { p.Status.PodIPs = nil }),
				newPod("d", "web", "fd00::4"),
			},
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []runtime.Object{tt.svc}
			for _, p := range tt.pods {
				objs = append(objs, p)
			}
			f := newFixture(t, objs...)
			if err := f.sync(tt.svc.Namespace, tt.svc.Name); err != nil {
				t.Fatal(err)
			}
			ep := f.endpoints(tt.svc.Namespace, tt.svc.Name)
			if got := render(ep.Subsets); got != tt.want {
				t.Errorf("subsets:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEndpointsMetadata(t *testing.T) {
	tests := []struct {
		name       string
		svc        *corev1.Service
		wantLabels string
	}{
		{"cluster IP", newService("web"), "map[endpoints.kubernetes.io/managed-by:endpoint-controller team:web]"},
		{"headless", newService("web", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }),
			"map[endpoints.kubernetes.io/managed-by:endpoint-controller service.kubernetes.io/headless: team:web]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.svc, newPod("a", "web", "10.244.1.1"))
			if err := f.sync("default", "web"); err != nil {
				t.Fatal(err)
			}
			ep := f.endpoints("default", "web")
			if got := fmt.Sprint(ep.Labels); got != tt.wantLabels {
				t.Errorf("labels = %s, want %s", got, tt.wantLabels)
			}
			if v := ep.Annotations[corev1.EndpointsLastChangeTriggerTime]; v != tt.svc.CreationTimestamp.UTC().Format(time.RFC3339Nano) {
				t.Errorf("trigger time = %q", v)
			}
			if _, ok := ep.Annotations[corev1.EndpointsOverCapacity]; ok {
				t.Error("over-capacity annotation on a small Endpoints")
			}
		})
	}
}

func TestUnchangedWritesNothing(t *testing.T) {
	svc := newService("web")
	a := newPod("a", "web", "10.244.1.1")
	f := newFixture(t, svc, a, newPod("b", "web", "10.244.1.2", notReady))
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); fmt.Sprint(w) != "[create endpoints]" {
		t.Fatalf("writes = %v", w)
	}
	f.observe("default", "web")
	// A pod update endpoints do not show (its resourceVersion only).
	a2 := a.DeepCopy()
	a2.ResourceVersion = "7"
	_ = f.podIdx.Update(a2)
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("unchanged: writes = %v, want none", w)
	}
	// a turns not ready: one update, and a cache still holding the
	// replaced version is refused.
	a3 := a2.DeepCopy()
	a3.ResourceVersion = "8"
	notReady(a3)
	_ = f.podIdx.Update(a3)
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); fmt.Sprint(w) != "[update endpoints]" {
		t.Fatalf("writes = %v", w)
	}
	if got := render(f.endpoints("default", "web").Subsets); got != "ready=[] notReady=[10.244.1.1(a@node-1) 10.244.1.2(b@node-1)] ports=[http/TCP/8080]" {
		t.Errorf("subsets = %s", got)
	}
	if err := f.sync("default", "web"); err == nil || !strings.Contains(err.Error(), "out of date") {
		t.Errorf("stale cache: err = %v", err)
	}
	f.observe("default", "web")
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("after catching up: writes = %v", w)
	}
}

func TestTruncation(t *testing.T) {
	svc := newService("web")
	objs := []runtime.Object{svc}
	for i := range 1001 {
		mut := []func(*corev1.Pod){}
		if i%2 == 1 {
			mut = append(mut, notReady)
		}
		objs = append(objs, newPod(fmt.Sprintf("p%04d", i), "web", fmt.Sprintf("10.244.%d.%d", i/250, i%250+1), mut...))
	}
	f := newFixture(t, objs...)
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	ep := f.endpoints("default", "web")
	ready, notReadyN := 0, 0
	for _, ss := range ep.Subsets {
		ready += len(ss.Addresses)
		notReadyN += len(ss.NotReadyAddresses)
	}
	// 501 ready kept whole, the not-ready cut to fill 1000.
	if ready != 501 || notReadyN != 499 || ep.Annotations[corev1.EndpointsOverCapacity] != "truncated" {
		t.Errorf("ready %d notReady %d annotation %q; want 501, 499, truncated", ready, notReadyN, ep.Annotations[corev1.EndpointsOverCapacity])
	}
	// Back under capacity: the annotation goes.
	f.observe("default", "web")
	for i := 0; i < 10; i++ {
		_ = f.podIdx.Delete(objs[1+i])
	}
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.endpoints("default", "web").Annotations[corev1.EndpointsOverCapacity]; ok {
		t.Error("over-capacity annotation kept under capacity")
	}
}

func TestServicesLeftAlone(t *testing.T) {
	// The API server's own Endpoints for "kubernetes", a Service without a
	// selector.
	kubernetes := newService("kubernetes", func(s *corev1.Service) { s.Spec.Selector = nil })
	apiEP := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", ResourceVersion: "3"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.10"}}, Ports: []corev1.EndpointPort{{Name: "https", Port: 6443}}}}}
	ext := newService("ext", func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	})
	f := newFixture(t, kubernetes, apiEP, ext, newPod("a", "kubernetes", "10.244.1.1"), newPod("b", "ext", "10.244.1.2"))
	for _, name := range []string{"kubernetes", "ext"} {
		if err := f.sync("default", name); err != nil {
			t.Fatal(err)
		}
		if w := f.writes(); len(w) != 0 {
			t.Errorf("%s: writes = %v, want none", name, w)
		}
	}
}

func TestServiceDeleted(t *testing.T) {
	managedEP := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "ep-uid", ResourceVersion: "3",
		Labels: map[string]string{LabelManagedBy: ManagedBy}}}
	userEP := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "manual", Namespace: "default", UID: "ep2-uid", ResourceVersion: "4"}}
	f := newFixture(t, managedEP, userEP)
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); fmt.Sprint(w) != "[delete endpoints]" {
		t.Errorf("managed: writes = %v", w)
	}
	if _, err := f.client.CoreV1().Endpoints("default").Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("managed Endpoints still there: %v", err)
	}
	if err := f.sync("default", "manual"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("not managed: writes = %v, want none", w)
	}
	// At start, only managed Endpoints are checked for a missing Service.
	_ = f.epIdx.Add(&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "default", Labels: map[string]string{LabelManagedBy: ManagedBy}}})
	if err := f.c.queueLeftoverEndpoints(); err != nil {
		t.Fatal(err)
	}
	var queued []string
	for f.c.queue.Len() > 0 {
		k, _ := f.c.queue.Get()
		queued = append(queued, k)
		f.c.queue.Done(k)
	}
	// "web" is still in the cache (its deletion not observed yet).
	sort.Strings(queued)
	if fmt.Sprint(queued) != "[default/old default/web]" {
		t.Errorf("queued %v, want the managed ones only", queued)
	}
}

func TestFailedUpdateRecordsEvent(t *testing.T) {
	svc := newService("web")
	f := newFixture(t, svc, newPod("a", "web", "10.244.1.1"))
	if err := f.sync("default", "web"); err != nil {
		t.Fatal(err)
	}
	f.observe("default", "web")
	_ = f.podIdx.Add(newPod("b", "web", "10.244.1.2"))
	f.client.PrependReactor("update", "endpoints", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd unavailable")
	})
	if err := f.sync("default", "web"); err == nil {
		t.Fatal("want an error")
	}
	select {
	case ev := <-f.recorder.Events:
		if !strings.HasPrefix(ev, "Warning FailedToUpdateEndpoint Failed to update endpoint default/web") {
			t.Errorf("event = %q", ev)
		}
	default:
		t.Error("no event")
	}
}

func TestRepackSubsets(t *testing.T) {
	ref := func(n string) *corev1.ObjectReference { return &corev1.ObjectReference{Name: n, UID: types.UID(n)} }
	a := corev1.EndpointAddress{IP: "10.0.0.1", TargetRef: ref("a")}
	b := corev1.EndpointAddress{IP: "10.0.0.2", TargetRef: ref("b")}
	p80 := corev1.EndpointPort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}
	p443 := corev1.EndpointPort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}
	tests := []struct {
		name string
		in   []corev1.EndpointSubset
		want string
	}{
		{
			name: "same ports merge, duplicates collapse",
			in: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{b}, Ports: []corev1.EndpointPort{p80}},
				{Addresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{p80}},
				{Addresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{p80}}},
			want: "ready=[10.0.0.1(a) 10.0.0.2(b)] notReady=[] ports=[http/TCP/80]",
		},
		{
			name: "not ready on one port is not ready",
			in: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{p80}},
				{NotReadyAddresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{p80}}},
			want: "ready=[] notReady=[10.0.0.1(a)] ports=[http/TCP/80]",
		},
		{
			name: "addresses serving the same ports share a subset",
			in: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{p80}},
				{Addresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{p443}}},
			want: "ready=[10.0.0.1(a)] notReady=[] ports=[https/TCP/443 http/TCP/80]",
		},
		{
			name: "no ports kept",
			in:   []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{a}}},
			want: "ready=[10.0.0.1(a)] notReady=[] ports=[]",
		},
		{name: "empty", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(RepackSubsets(tt.in)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
