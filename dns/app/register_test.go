package app

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"skiff.dev/apiserver/pkg/testserver"
)

// TestKubeDNSService: skiff-dns creates the kube-dns Service at
// --cluster-ip with upstream's labels and ports, and one EndpointSlice per
// running instance (here this one and another node's), and deletes its
// own slice when it stops.
func TestKubeDNSService(t *testing.T) {
	ts := testserver.Start(t, nil)
	ctx := context.Background()
	inst := startDNS(t, ts, startUpstream(t), nil)

	var svc *corev1.Service
	poll(t, 10*time.Second, "the kube-dns Service", func() (bool, string) {
		var err error
		svc, err = ts.Client.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		return err == nil, errString(err)
	})
	if svc.Spec.ClusterIP != "10.96.0.10" || svc.Spec.Selector != nil || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service spec %+v", svc.Spec)
	}
	if !reflect.DeepEqual(svc.Labels, ServiceLabels()) {
		t.Errorf("labels %v, want %v", svc.Labels, ServiceLabels())
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name+"/"+string(p.Protocol)+"/"+itoa(p.Port))
	}
	if want := []string{"dns/UDP/53", "dns-tcp/TCP/53", "metrics/TCP/9153"}; !reflect.DeepEqual(ports, want) {
		t.Errorf("ports %v, want %v", ports, want)
	}

	slices := ts.Client.DiscoveryV1().EndpointSlices("kube-system")
	var own *discoveryv1.EndpointSlice
	poll(t, 10*time.Second, "this instance's EndpointSlice", func() (bool, string) {
		var err error
		own, err = slices.Get(ctx, "kube-dns-node-1", metav1.GetOptions{})
		return err == nil, errString(err)
	})
	if len(own.Endpoints) != 1 || own.Endpoints[0].Addresses[0] != testNodeIP || !*own.Endpoints[0].Conditions.Ready ||
		*own.Endpoints[0].NodeName != "node-1" || own.Labels[discoveryv1.LabelServiceName] != "kube-dns" ||
		own.Labels[discoveryv1.LabelManagedBy] != ManagedBy || own.OwnerReferences[0].UID != svc.UID {
		t.Errorf("EndpointSlice %+v", own)
	}
	for _, p := range own.Ports {
		if *p.Name != PortMetrics && int(*p.Port) != inst.cfg.Options.Port {
			t.Errorf("port %s is %d, want the DNS port %d", *p.Name, *p.Port, inst.cfg.Options.Port)
		}
	}

	// A second instance, on node-2, as system:skiff-dns too: it keeps the
	// Service as it is and adds its own slice.
	other := registrar{client: dnsClient(t, ts), namespace: "kube-system", service: "kube-dns", clusterIP: "10.96.0.10",
		nodeName: "node-2", nodeIP: "192.0.2.54", dnsPort: 53, metrics: 9153, period: time.Minute,
		leaseDuration: 40 * time.Second, renewInterval: 10 * time.Second}
	if err := other.ensure(ctx); err != nil {
		t.Fatalf("second instance: %v", err)
	}
	list, err := slices.List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kube-dns"})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("slices of kube-dns: %v %v", list, err)
	}

	inst.stop()
	if _, err := slices.Get(ctx, "kube-dns-node-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("this instance's slice after a clean stop: %v, want NotFound", err)
	}
	if _, err := slices.Get(ctx, "kube-dns-node-2", metav1.GetOptions{}); err != nil {
		t.Errorf("the other instance's slice: %v", err)
	}
}

func dnsClient(t *testing.T, ts *testserver.TestServer) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", ts.Dir+"/dns.kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

// TestDeadInstances: each instance renews its Lease skiff-dns-<node>;
// an instance that stops without cleaning up (a crash) has its slice, and
// its Lease, deleted by another instance within the Lease's duration, and
// so has a slice of skiff-dns's whose Lease is missing; live instances'
// slices stay; a clean stop still deletes the instance's own slice and
// Lease at once.
func TestDeadInstances(t *testing.T) {
	const duration, renew = 2 * time.Second, 200 * time.Millisecond
	ts := testserver.Start(t, nil)
	ctx := context.Background()
	a := startDNS(t, ts, startUpstream(t), func(o *Options) {
		o.LeaseDuration, o.LeaseRenewInterval = duration, renew
	})
	bctx, crash := context.WithCancel(ctx)
	b := &registrar{client: dnsClient(t, ts), namespace: "kube-system", service: "kube-dns", clusterIP: "10.96.0.10",
		nodeName: "node-2", nodeIP: "192.0.2.54", dnsPort: 53, metrics: 9153, period: time.Minute,
		leaseDuration: duration, renewInterval: renew}
	bDone := make(chan struct{})
	go func() { defer close(bDone); b.run(bctx) }()
	t.Cleanup(func() { crash(); <-bDone })

	slices := ts.Client.DiscoveryV1().EndpointSlices("kube-system")
	leases := ts.Client.CoordinationV1().Leases("kube-system")
	exists := func(name string) (bool, error) {
		_, err := slices.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	for _, node := range []string{"node-1", "node-2"} {
		poll(t, 10*time.Second, node+"'s slice and Lease", func() (bool, string) {
			ok, err := exists(SliceName("kube-dns", node))
			if !ok {
				return false, errString(err)
			}
			l, err := leases.Get(ctx, LeaseName(node), metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return *l.Spec.HolderIdentity == node && *l.Spec.LeaseDurationSeconds == 2, fmt.Sprintf("%+v", l.Spec)
		})
	}
	// A slice of skiff-dns's whose instance has no Lease (one that never
	// wrote it, or whose Lease was deleted).
	if _, err := slices.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: SliceName("kube-dns", "node-3"), Labels: sliceLabels("kube-dns")},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.55"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	// A slice of another manager's that happens to have such a name is
	// not skiff-dns's to delete.
	if _, err := slices.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kube-dns-foreign", Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns", discoveryv1.LabelManagedBy: "someone-else"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.56"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	poll(t, duration+3*renew+2*time.Second, "node-3's slice without a Lease deleted", func() (bool, string) {
		ok, err := exists(SliceName("kube-dns", "node-3"))
		return !ok && err == nil, errString(err)
	})
	if took := time.Since(created); took < duration {
		t.Errorf("node-3's slice went %v after its creation, before a Lease's duration (%v)", took, duration)
	}

	// Both instances live on past a Lease's duration: no slice of theirs
	// goes. (An assertion over a span of time, not a wait for a state.)
	for end := time.Now().Add(duration + 3*renew); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		for _, node := range []string{"node-1", "node-2"} {
			if ok, err := exists(SliceName("kube-dns", node)); !ok {
				t.Fatalf("%s's slice went while it renews its Lease: %v", node, err)
			}
		}
	}

	// node-2 crashes: it stops renewing and cleans nothing up.
	crash()
	<-bDone
	crashed := time.Now()
	if ok, _ := exists(SliceName("kube-dns", "node-2")); !ok {
		t.Fatal("a crash removed node-2's slice itself")
	}
	poll(t, duration+3*renew+2*time.Second, "node-2's slice deleted by node-1", func() (bool, string) {
		ok, err := exists(SliceName("kube-dns", "node-2"))
		return !ok && err == nil, errString(err)
	})
	// node-1 saw node-2's last renewal at most one renewal interval
	// after it, and looks again every renewal interval.
	if took := time.Since(crashed); took > duration+2*renew+time.Second {
		t.Errorf("node-2's slice went %v after its crash; its Lease lasts %v", took, duration)
	}
	// The Lease goes right after the slice.
	poll(t, 5*time.Second, "node-2's expired Lease deleted", func() (bool, string) {
		_, err := leases.Get(ctx, LeaseName("node-2"), metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})
	if _, err := slices.Get(ctx, "kube-dns-foreign", metav1.GetOptions{}); err != nil {
		t.Errorf("another manager's slice: %v", err)
	}

	// A clean stop deletes node-1's own slice and Lease at once.
	if ok, err := exists(SliceName("kube-dns", "node-1")); !ok {
		t.Fatalf("node-1's slice before its stop: %v", err)
	}
	a.stop()
	if ok, err := exists(SliceName("kube-dns", "node-1")); ok || err != nil {
		t.Errorf("node-1's slice after a clean stop: %v %v", ok, err)
	}
	if _, err := leases.Get(ctx, LeaseName("node-1"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node-1's Lease after a clean stop: %v, want NotFound", err)
	}
}
