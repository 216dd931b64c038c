package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
)

// metricsKubelet is a kubelet's /metrics/resource on loopback, with the
// cluster CA's serving certificate, for the API server's kubelet client
// only: each pod's containers burn half a core each since start.
type metricsKubelet struct {
	port  int
	start time.Time
	mu    sync.Mutex
	pods  []string // in namespace default, containers app and sidecar
}

func startMetricsKubelet(t testing.TB, pkiDir string, pods []string) *metricsKubelet {
	t.Helper()
	ca, err := certs.LoadCA(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueServingCert(ca, "metrics-kubelet", nil, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	k := &metricsKubelet{start: time.Now().Add(-time.Minute), pods: pods}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != certs.APIServerKubeletClientCommonName || r.URL.Path != "/metrics/resource" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		now := time.Now()
		ms, burnt := now.UnixMilli(), now.Sub(k.start).Seconds()/2
		var b strings.Builder
		fmt.Fprintf(&b, "node_cpu_usage_seconds_total %g %d\nnode_memory_working_set_bytes %d %d\n", burnt*4, ms, 3<<30, ms)
		k.mu.Lock()
		for _, p := range k.pods {
			for _, c := range []string{"app", "sidecar"} {
				l := fmt.Sprintf(`{container=%q,namespace="default",pod=%q}`, c, p)
				fmt.Fprintf(&b, "container_cpu_usage_seconds_total%s %g %d\ncontainer_memory_working_set_bytes%s %d %d\ncontainer_start_time_seconds%s %d %d\n",
					l, burnt, ms, l, 10<<20, ms, l, k.start.Unix(), k.start.UnixMilli())
			}
		}
		k.mu.Unlock()
		_, _ = w.Write([]byte(b.String()))
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS12,
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	k.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return k
}

// readyNode registers a Ready node whose kubelet is k.
func readyNode(t testing.TB, ts *testserver.TestServer, name string, k *metricsKubelet) {
	t.Helper()
	c := context.Background()
	n, err := ts.Client.CoreV1().Nodes().Create(c, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"metrics-test": "yes"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status = corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(k.port)}},
		Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
	}
	if _, err := ts.Client.CoreV1().Nodes().UpdateStatus(c, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createPods(t testing.TB, ts *testserver.TestServer, names []string) {
	t.Helper()
	for _, name := range names {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}, {Name: "sidecar", Image: "busybox"}}},
		}
		if _, err := ts.Client.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMetricsAPI: the built-in metrics.k8s.io scrapes a Ready node's
// kubelet through the kubelet client and serves its pods' and its own
// CPU rate to the metrics clientset and the real kubectl top; discovery
// lists the group in both documents; a user may read it once bound to
// system:aggregated-metrics-reader.
func TestMetricsAPI(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.MetricResolution = 200 * time.Millisecond })
	k := startMetricsKubelet(t, ts.PKIDir, []string{"web", "db"})
	createPods(t, ts, []string{"web", "db"})
	readyNode(t, ts, "metrics-node", k)

	mc, err := metricsclient.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	var list *metricsv1beta1.PodMetricsList
	if err := waitFor(t, func() error {
		list, err = mc.MetricsV1beta1().PodMetricses("default").List(c, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != 2 {
			return fmt.Errorf("%d items", len(list.Items))
		}
		return nil
	}); err != nil {
		t.Fatalf("pod metrics: %v", err)
	}
	for _, pm := range list.Items {
		if len(pm.Containers) != 2 {
			t.Fatalf("%s: containers %+v", pm.Name, pm.Containers)
		}
		for _, cm := range pm.Containers {
			// Half a core, give or take the rounding of millisecond
			// timestamps over a 200 ms window.
			if cpu := cm.Usage.Cpu().MilliValue(); cpu < 450 || cpu > 550 {
				t.Errorf("%s/%s cpu = %dm, want about 500m", pm.Name, cm.Name, cpu)
			}
			if mem := cm.Usage.Memory().Value(); mem != 10<<20 {
				t.Errorf("%s/%s memory = %d", pm.Name, cm.Name, mem)
			}
		}
	}
	nm, err := mc.MetricsV1beta1().NodeMetricses().Get(c, "metrics-node", metav1.GetOptions{})
	if err != nil || nm.Usage.Cpu().MilliValue() < 1800 || nm.Labels["metrics-test"] != "yes" {
		t.Errorf("node metrics = %+v, %v", nm, err)
	}
	sel, err := mc.MetricsV1beta1().PodMetricses("default").List(c, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil || len(sel.Items) != 1 || sel.Items[0].Name != "db" {
		t.Errorf("app=db: %+v, %v", sel, err)
	}

	// Discovery, unaggregated and aggregated, as kubectl reads it.
	code, body := raw(t, ts, http.MethodGet, "/apis/metrics.k8s.io/v1beta1", "", nil)
	var rl metav1.APIResourceList
	if code != http.StatusOK || json.Unmarshal(body, &rl) != nil || len(rl.APIResources) != 2 || rl.APIResources[0].Kind != "NodeMetrics" {
		t.Errorf("/apis/metrics.k8s.io/v1beta1: %d %s", code, body)
	}
	code, body = rawAccept(t, ts, http.MethodGet, "/apis", "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"name":"metrics.k8s.io"`) || !strings.Contains(string(body), `"kind":"PodMetrics"`) {
		t.Errorf("aggregated /apis: %d %.300s", code, body)
	}
	if out, code := kubectl(t, c, ts, "top", "pods", "-n", "default"); code != 0 || rowOf(out, "web") == "" {
		t.Errorf("kubectl top pods: %d\n%s", code, out)
	}
	if out, code := kubectl(t, c, ts, "top", "nodes"); code != 0 || rowOf(out, "metrics-node") == "" {
		t.Errorf("kubectl top nodes: %d\n%s", code, out)
	}
	// kubectl get: metrics-server's table columns.
	if out, code := kubectl(t, c, ts, "get", "podmetrics", "-n", "default"); code != 0 || !strings.Contains(out, "CPU") || !strings.Contains(out, "WINDOW") || rowOf(out, "db") == "" {
		t.Errorf("kubectl get podmetrics: %d\n%s", code, out)
	}
	if out, code := kubectl(t, c, ts, "get", "nodemetrics", "metrics-node", "-o", "name"); code != 0 || strings.TrimSpace(out) != "nodemetrics.metrics.k8s.io/metrics-node" {
		t.Errorf("kubectl get nodemetrics -o name: %d\n%s", code, out)
	}

	// RBAC: a user reads metrics once bound to the reader role.
	userCfg := rest.AnonymousClientConfig(ts.AdminConfig)
	userCfg.BearerToken = "test-user-token"
	userMC, err := metricsclient.NewForConfig(userCfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := userMC.MetricsV1beta1().PodMetricses("default").List(c, metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("test-user before the binding: %v, want forbidden", err)
	}
	if _, err := ts.Client.RbacV1().ClusterRoleBindings().Create(c, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-user-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:aggregated-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "test-user"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, func() error {
		_, err := userMC.MetricsV1beta1().NodeMetricses().List(c, metav1.ListOptions{})
		return err
	}); err != nil {
		t.Errorf("test-user after the binding: %v", err)
	}
}

// rowOf is the line of kubectl's table whose first column is name.
func rowOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return l
		}
	}
	return ""
}

// BenchmarkMetricsAPIList is the latency of listing the pod metrics of N
// pods through the API server (TLS, authentication, RBAC, then the
// built-in metrics.k8s.io), as the metrics clientset asks for them (JSON),
// beside listing the same pods from /api/v1 for scale.
//
//	cd apiserver && go test -run '^$' -bench MetricsAPIList -benchtime 50x ./test/integration/
func BenchmarkMetricsAPIList(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			ts := testserver.Start(b, func(o *server.Options) { o.MetricResolution = time.Second })
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("pod-%d", i)
			}
			k := startMetricsKubelet(b, ts.PKIDir, names)
			createPods(b, ts, names)
			readyNode(b, ts, "bench-node", k)
			mc, err := metricsclient.NewForConfig(ts.AdminConfig)
			if err != nil {
				b.Fatal(err)
			}
			c := context.Background()
			deadline := time.Now().Add(time.Minute)
			for {
				l, err := mc.MetricsV1beta1().PodMetricses("default").List(c, metav1.ListOptions{})
				if err == nil && len(l.Items) == n {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("metrics of %d pods not served within a minute: %v", n, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			b.Run("metrics.k8s.io", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := mc.MetricsV1beta1().PodMetricses("default").List(c, metav1.ListOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("api-v1-pods", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := ts.Client.CoreV1().Pods("default").List(c, metav1.ListOptions{ResourceVersion: "0"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
