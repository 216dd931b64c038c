package app

import (
	"context"
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
		nodeName: "node-2", nodeIP: "192.0.2.54", dnsPort: 53, metrics: 9153, period: time.Minute}
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
