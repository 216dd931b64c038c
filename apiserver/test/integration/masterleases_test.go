package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
)

// kubernetesEndpoints is the kubernetes Service's Endpoints and
// EndpointSlices as "ip:port" lists, sorted.
func kubernetesEndpoints(ctx context.Context, c kubernetes.Interface) (eps, slices []string, err error) {
	ep, err := c.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	for _, sub := range ep.Subsets {
		for _, a := range sub.Addresses {
			for _, p := range sub.Ports {
				eps = append(eps, fmt.Sprintf("%s:%d", a.IP, p.Port))
			}
		}
	}
	l, err := c.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			for _, p := range s.Ports {
				slices = append(slices, fmt.Sprintf("%s:%d", e.Addresses[0], *p.Port))
			}
		}
	}
	sort.Strings(eps)
	sort.Strings(slices)
	return eps, slices, nil
}

func waitKubernetesEndpoints(t *testing.T, c kubernetes.Interface, want []string) {
	t.Helper()
	sort.Strings(want)
	var eps, slices []string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 45*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		eps, slices, err = kubernetesEndpoints(ctx, c)
		if err != nil {
			return false, nil
		}
		return strings.Join(eps, ",") == strings.Join(want, ",") && strings.Join(slices, ",") == strings.Join(want, ","), nil
	})
	if err != nil {
		t.Fatalf("kubernetes endpoints %v, slices %v; want %v", eps, slices, want)
	}
}

// Two API servers on one etcd: each keeps a master lease, the kubernetes
// Service's endpoints are the union of the live ones, a server that stops
// leaves them at once, and one that dies without a word leaves them when
// its lease expires.
func TestKubernetesEndpointsFollowLiveServers(t *testing.T) {
	// Documentation addresses (TEST-NET-1): written into the endpoints,
	// never sent to.
	a := start(t, func(o *server.Options) {
		o.AdvertiseAddress = "192.0.2.10"
		o.EndpointReconcileInterval = 300 * time.Millisecond
	})
	epA := fmt.Sprintf("192.0.2.10:%d", a.Server.Port())
	waitKubernetesEndpoints(t, a.Client, []string{epA})

	b, err := testserver.StartServer(t.TempDir(), func(o *server.Options) {
		o.AdvertiseAddress = "192.0.2.11"
		o.EndpointReconcileInterval = 300 * time.Millisecond
		o.EtcdServers = a.Server.EtcdEndpoints()
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			b.TearDown()
		}
	})
	epB := fmt.Sprintf("192.0.2.11:%d", b.Server.Port())
	waitKubernetesEndpoints(t, a.Client, []string{epA, epB})
	waitKubernetesEndpoints(t, b.Client, []string{epA, epB})

	etcd := a.Server.EtcdClient()
	for _, ip := range []string{"192.0.2.10", "192.0.2.11"} {
		resp, err := etcd.Get(ctx(t), server.MasterLeasePrefix+ip)
		if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
			t.Fatalf("master lease of %s: %v %v", ip, err, resp.Kvs)
		}
		ttl, err := etcd.TimeToLive(ctx(t), clientv3.LeaseID(resp.Kvs[0].Lease))
		if err != nil || ttl.TTL <= 0 || ttl.TTL > 15 {
			t.Errorf("lease of %s: TTL %v, %v; want 1..15s", ip, ttl.TTL, err)
		}
	}

	// A server that shuts down takes itself out.
	b.TearDown()
	stopped = true
	waitKubernetesEndpoints(t, a.Client, []string{epA})
	if resp, err := etcd.Get(ctx(t), server.MasterLeasePrefix+"192.0.2.11"); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("master lease of the stopped server: %v %v", err, resp.Kvs)
	}

	// A server that crashed stops renewing: it goes with its lease.
	lease, err := etcd.Grant(ctx(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Put(ctx(t), server.MasterLeasePrefix+"192.0.2.99", "", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	waitKubernetesEndpoints(t, a.Client, []string{epA, fmt.Sprintf("192.0.2.99:%d", a.Server.Port())})
	waitKubernetesEndpoints(t, a.Client, []string{epA})
}

// The Service itself, once, with the first address of the range.
func TestKubernetesService(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.AdvertiseAddress = "192.0.2.20" })
	svc, err := ts.Client.CoreV1().Services("default").Get(ctx(t), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "10.96.0.1" || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.IntValue() != ts.Server.Port() ||
		*svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		t.Errorf("kubernetes service: %+v", svc.Spec)
	}
	waitKubernetesEndpoints(t, ts.Client, []string{fmt.Sprintf("192.0.2.20:%d", ts.Server.Port())})
	// Labelled as upstream's EndpointsAdapter labels them.
	ep, err := ts.Client.CoreV1().Endpoints("default").Get(ctx(t), "kubernetes", metav1.GetOptions{})
	if err != nil || ep.Labels[discoveryv1.LabelSkipMirror] != "true" {
		t.Errorf("endpoints labels: %v %v", err, ep.Labels)
	}
	slice, err := ts.Client.DiscoveryV1().EndpointSlices("default").Get(ctx(t), "kubernetes", metav1.GetOptions{})
	if err != nil || len(slice.Labels) != 1 || slice.Labels[discoveryv1.LabelServiceName] != "kubernetes" ||
		slice.AddressType != discoveryv1.AddressTypeIPv4 || *slice.Ports[0].Name != "https" || !*slice.Endpoints[0].Conditions.Ready {
		t.Errorf("endpointslice: %v %+v", err, slice)
	}
}
