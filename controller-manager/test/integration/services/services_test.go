package services

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/endpoints"
	"skiff.dev/controller-manager/pkg/controller/endpointslice"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const (
	timeout = 60 * time.Second
	ns      = "default"
)

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	cm     *cmapp.Config
}

// start runs an API server and the controller manager with the two
// endpoint controllers and the garbage collector (no kubelet, scheduler
// or node lifecycle: the tests play the kubelet), and registers node-1 in
// zone-a.
func start(t *testing.T) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	cm, _ := cmtest.Start(t, ts, func(o *cmapp.Options) {
		o.Controllers = []string{"endpoint", "endpointslice", "garbage-collector"}
	})
	e := &env{t: t, ctx: context.Background(), client: ts.Client, cm: cm}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}}}
	if _, err := e.client.CoreV1().Nodes().Create(e.ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// poll waits until cond holds, failing with the last state it reported.
func (e *env) poll(what string, cond func() (bool, string)) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v; last state: %s", what, err, last)
	}
}

func (e *env) createService(svc *corev1.Service) *corev1.Service {
	e.t.Helper()
	out, err := e.client.CoreV1().Services(ns).Create(e.ctx, svc, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// runPod creates a pod of app bound to node-1 and reports it Running with
// ip, Ready as ready (the kubelet's part).
func (e *env) runPod(name, app, ip string, ready bool) *corev1.Pod {
	e.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "web", Image: "busybox",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
	}
	if _, err := e.client.CoreV1().Pods(ns).Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.setStatus(name, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	})
	e.setReady(name, ready)
	out, err := e.client.CoreV1().Pods(ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) setStatus(name string, mutate func(*corev1.Pod)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := e.client.CoreV1().Pods(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(p)
		_, err = e.client.CoreV1().Pods(ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("pod %s status: %v", name, err)
	}
}

func (e *env) setReady(name string, ready bool) {
	e.t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	e.setStatus(name, func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	})
}

// slices returns the controller's slices of svc.
func (e *env) slices(svc string) ([]discoveryv1.EndpointSlice, error) {
	l, err := e.client.DiscoveryV1().EndpointSlices(ns).List(e.ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + svc + "," + discoveryv1.LabelManagedBy + "=" + endpointslice.ManagedBy,
	})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// sliceState renders the endpoints of svc's slices as sorted
// "pod:ip:ready/serving/terminating" strings.
func (e *env) sliceState(svc string) (string, []discoveryv1.EndpointSlice) {
	items, err := e.slices(svc)
	if err != nil {
		return err.Error(), nil
	}
	var eps []string
	for _, s := range items {
		for _, ep := range s.Endpoints {
			c := ep.Conditions
			eps = append(eps, fmt.Sprintf("%s:%s:%t/%t/%t", ep.TargetRef.Name, strings.Join(ep.Addresses, ","),
				ptr.Deref(c.Ready, false), ptr.Deref(c.Serving, false), ptr.Deref(c.Terminating, false)))
		}
	}
	slices.Sort(eps)
	return strings.Join(eps, " "), items
}

// endpointsState renders Endpoints svc as "ready=[ip ...] notReady=[ip ...]".
func (e *env) endpointsState(svc string) (string, *corev1.Endpoints) {
	ep, err := e.client.CoreV1().Endpoints(ns).Get(e.ctx, svc, metav1.GetOptions{})
	if err != nil {
		return err.Error(), nil
	}
	var ready, notReady []string
	for _, ss := range ep.Subsets {
		for _, a := range ss.Addresses {
			ready = append(ready, a.TargetRef.Name+":"+a.IP)
		}
		for _, a := range ss.NotReadyAddresses {
			notReady = append(notReady, a.TargetRef.Name+":"+a.IP)
		}
	}
	slices.Sort(ready)
	slices.Sort(notReady)
	return fmt.Sprintf("ready=%v notReady=%v", ready, notReady), ep
}

// queueAdds is workqueue_adds_total of the queue named name.
func (e *env) queueAdds(name string) float64 {
	e.t.Helper()
	families, err := e.cm.Registry.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "workqueue_adds_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == name {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func webService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "web"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}},
		},
	}
}

// The path of step 8 up to the endpoints: a Service and its pods get an
// EndpointSlice and an Endpoints with the pods' addresses; a pod turning
// not ready, a pod terminating and a pod deleted show in both; deleting
// the Service removes both.
func TestServiceEndpointsFollowPods(t *testing.T) {
	t.Parallel()
	e := start(t)
	svc := e.createService(webService())
	a := e.runPod("web-a", "web", "10.244.1.10", true)
	e.runPod("web-b", "web", "10.244.1.11", true)
	e.runPod("other", "other", "10.244.1.12", true)

	var slice discoveryv1.EndpointSlice
	e.poll("the slice of both pods", func() (bool, string) {
		st, items := e.sliceState("web")
		if len(items) == 1 {
			slice = items[0]
		}
		return st == "web-a:10.244.1.10:true/true/false web-b:10.244.1.11:true/true/false", st
	})
	ref := metav1.GetControllerOf(&slice)
	if !strings.HasPrefix(slice.Name, "web-") || slice.AddressType != discoveryv1.AddressTypeIPv4 || ref == nil || ref.UID != svc.UID ||
		slice.Labels["team"] != "web" || slice.Annotations[corev1.EndpointsLastChangeTriggerTime] == "" {
		t.Errorf("slice = %+v", slice.ObjectMeta)
	}
	if len(slice.Ports) != 1 || ptr.Deref(slice.Ports[0].Port, 0) != 8080 || ptr.Deref(slice.Ports[0].Name, "") != "http" {
		t.Errorf("ports = %+v, want http 8080 (the named targetPort resolved)", slice.Ports)
	}
	for _, ep := range slice.Endpoints {
		if ptr.Deref(ep.NodeName, "") != "node-1" || ptr.Deref(ep.Zone, "") != "zone-a" || ep.TargetRef.Kind != "Pod" {
			t.Errorf("endpoint %+v: want node-1, zone-a and a pod target", ep)
		}
		if ep.TargetRef.Name == "web-a" && ep.TargetRef.UID != a.UID {
			t.Errorf("web-a target UID = %s, want %s", ep.TargetRef.UID, a.UID)
		}
	}
	var endpointsObj *corev1.Endpoints
	e.poll("the Endpoints of both pods", func() (bool, string) {
		st, ep := e.endpointsState("web")
		endpointsObj = ep
		return st == "ready=[web-a:10.244.1.10 web-b:10.244.1.11] notReady=[]", st
	})
	if endpointsObj.Labels[endpoints.LabelManagedBy] != endpoints.ManagedBy || endpointsObj.Labels["team"] != "web" ||
		len(endpointsObj.Subsets) != 1 || len(endpointsObj.Subsets[0].Ports) != 1 || endpointsObj.Subsets[0].Ports[0].Port != 8080 {
		t.Errorf("endpoints = %+v", endpointsObj)
	}

	// Both work queues report to the controller manager's registry.
	for _, q := range []string{"endpoint", "endpoint_slice"} {
		if n := e.queueAdds(q); n == 0 {
			t.Errorf("workqueue_adds_total{name=%q} = 0", q)
		}
	}

	// web-b turns not ready.
	e.setReady("web-b", false)
	e.poll("web-b not ready in the slice", func() (bool, string) {
		st, _ := e.sliceState("web")
		return st == "web-a:10.244.1.10:true/true/false web-b:10.244.1.11:false/false/false", st
	})
	e.poll("web-b under notReadyAddresses", func() (bool, string) {
		st, _ := e.endpointsState("web")
		return st == "ready=[web-a:10.244.1.10] notReady=[web-b:10.244.1.11]", st
	})

	// web-a is deleted gracefully: no kubelet finishes it, so it stays
	// terminating: serving but not ready in the slice, gone from the
	// Endpoints.
	if err := e.client.CoreV1().Pods(ns).Delete(e.ctx, "web-a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](300)}); err != nil {
		t.Fatal(err)
	}
	e.poll("web-a terminating in the slice", func() (bool, string) {
		st, _ := e.sliceState("web")
		return st == "web-a:10.244.1.10:false/true/true web-b:10.244.1.11:false/false/false", st
	})
	e.poll("web-a out of the Endpoints", func() (bool, string) {
		st, _ := e.endpointsState("web")
		return st == "ready=[] notReady=[web-b:10.244.1.11]", st
	})
	// Then removed.
	if err := e.client.CoreV1().Pods(ns).Delete(e.ctx, "web-a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e.poll("web-a out of the slice", func() (bool, string) {
		st, _ := e.sliceState("web")
		return st == "web-b:10.244.1.11:false/false/false", st
	})
	// The slice was updated in place all along.
	if _, items := e.sliceState("web"); len(items) != 1 || items[0].Name != slice.Name {
		t.Errorf("slices = %d (%v), want %s kept", len(items), items, slice.Name)
	}

	// The Service goes: its slice (garbage collector) and its Endpoints
	// (the controller) go with it.
	if err := e.client.CoreV1().Services(ns).Delete(e.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("the slice deleted", func() (bool, string) {
		items, err := e.slices("web")
		return err == nil && len(items) == 0, fmt.Sprintf("%d slices, %v", len(items), err)
	})
	e.poll("the Endpoints deleted", func() (bool, string) {
		_, err := e.client.CoreV1().Endpoints(ns).Get(e.ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// A headless Service gets hostnames and the headless label; a Service
// without a selector, its hand-written Endpoints, and the API server's
// "kubernetes" Service are left alone.
func TestHeadlessAndSelectorlessServices(t *testing.T) {
	t.Parallel()
	e := start(t)
	kubeEP, err := e.client.CoreV1().Endpoints(ns).Get(e.ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	e.createService(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}},
	})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Labels: map[string]string{"app": "db"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Hostname: "db-0", Subdomain: "db",
			Containers: []corev1.Container{{Name: "db", Image: "busybox"}}},
	}
	if _, err := e.client.CoreV1().Pods(ns).Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.setStatus("db-0", func(p *corev1.Pod) {
		p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodRunning, "10.244.1.20", []corev1.PodIP{{IP: "10.244.1.20"}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	})
	e.poll("the headless slice with the hostname", func() (bool, string) {
		items, err := e.slices("db")
		if err != nil || len(items) != 1 || len(items[0].Endpoints) != 1 {
			return false, fmt.Sprintf("%v %v", items, err)
		}
		s := items[0]
		_, headless := s.Labels[corev1.IsHeadlessService]
		return headless && ptr.Deref(s.Endpoints[0].Hostname, "") == "db-0" && len(s.Ports) == 0, fmt.Sprintf("%+v", s)
	})
	e.poll("the headless Endpoints with the hostname", func() (bool, string) {
		ep, err := e.client.CoreV1().Endpoints(ns).Get(e.ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, headless := ep.Labels[corev1.IsHeadlessService]
		ok := headless && len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 1 && ep.Subsets[0].Addresses[0].Hostname == "db-0" &&
			ep.Subsets[0].Addresses[0].IP == "10.244.1.20"
		return ok, fmt.Sprintf("%+v", ep)
	})

	// A Service without a selector, with Endpoints written by hand.
	e.createService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "external"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432, Protocol: corev1.ProtocolTCP}}}})
	manual := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "external"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.10"}}, Ports: []corev1.EndpointPort{{Port: 5432}}}}}
	manual, err = e.client.CoreV1().Endpoints(ns).Create(e.ctx, manual, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The selector-less Service goes first, then the headless one: the
	// controller's sync of "external" is queued before that of "db", so
	// once db's Endpoints are gone, external's sync has run (and has only
	// a GET to do, where db's has a GET and a DELETE).
	if err := e.client.CoreV1().Services(ns).Delete(e.ctx, "external", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.client.CoreV1().Services(ns).Delete(e.ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("the db Endpoints and slice deleted", func() (bool, string) {
		_, err := e.client.CoreV1().Endpoints(ns).Get(e.ctx, "db", metav1.GetOptions{})
		items, lerr := e.slices("db")
		return apierrors.IsNotFound(err) && lerr == nil && len(items) == 0, fmt.Sprintf("%v, %d slices", err, len(items))
	})
	kept, err := e.client.CoreV1().Endpoints(ns).Get(e.ctx, "external", metav1.GetOptions{})
	if err != nil || kept.UID != manual.UID || kept.ResourceVersion != manual.ResourceVersion {
		t.Errorf("hand-written Endpoints of a selector-less Service: %v, %v (want it untouched)", kept, err)
	}

	got, err := e.client.CoreV1().Endpoints(ns).Get(e.ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || got.UID != kubeEP.UID {
		t.Fatalf("kubernetes Endpoints: %v, %v", got, err)
	}
	if _, ok := got.Labels[endpoints.LabelManagedBy]; ok {
		t.Errorf("the controller took over the API server's Endpoints: %v", got.Labels)
	}
}
