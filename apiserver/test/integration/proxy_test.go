package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"skiff.dev/apiserver/pkg/testserver"
)

// netnsEcho runs an HTTP server that describes each request it gets, on
// port 8080 of an address inside a network namespace of the test's own,
// reached from the host over a veth pair (198.18.0.0/15, the benchmarking
// range: nothing else routes it). The namespace and the pair go at cleanup.
func netnsEcho(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	id := os.Getpid() % 65536
	ns, hostIf, nsIf := fmt.Sprintf("skiff-px-%d", id), fmt.Sprintf("skpx%da", id), fmt.Sprintf("skpx%db", id)
	hostIP, nsIP := fmt.Sprintf("198.18.%d.%d", id/64%256, id%64*4+1), fmt.Sprintf("198.18.%d.%d", id/64%256, id%64*4+2)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", hostIf).Run()
		_ = exec.Command("ip", "netns", "del", ns).Run()
	})
	run("link", "add", hostIf, "type", "veth", "peer", "name", nsIf)
	run("link", "set", nsIf, "netns", ns)
	run("addr", "add", hostIP+"/30", "dev", hostIf)
	run("link", "set", hostIf, "up")
	run("-n", ns, "addr", "add", nsIP+"/30", "dev", nsIf)
	run("-n", ns, "link", "set", nsIf, "up")
	run("-n", ns, "link", "set", "lo", "up")

	// The listening socket is made on a thread moved into the namespace;
	// that thread is then dropped (the goroutine ends locked to it).
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: err}
			return
		}
		l, err := net.Listen("tcp", net.JoinHostPort(nsIP, "8080"))
		ch <- result{l, err}
	}()
	res := <-ch
	if res.err != nil {
		t.Fatalf("listening in the namespace: %v", res.err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><a href="/docs/a">a</a><img src="http://%s:8080/img.png"><a href="https://example.com/x">x</a></body></html>`, nsIP)
			return
		case "/moved":
			http.Redirect(w, r, "/new/place", http.StatusFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"method": r.Method, "path": r.URL.EscapedPath(), "query": r.URL.RawQuery, "body": string(body),
			"authorization": r.Header.Get("Authorization"), "forwardedFor": r.Header.Get("X-Forwarded-For"), "host": r.Host,
		})
	})}
	go func() { _ = srv.Serve(res.l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return nsIP
}

// rawWithToken sends a request with a bearer token (so that the test can
// see it is not passed on), not following redirects.
func rawWithToken(t *testing.T, ts *testserver.TestServer, method, path, body string) (int, http.Header, map[string]string, string) {
	t.Helper()
	c, err := ts.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-admin-token")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var echo map[string]string
	_ = json.Unmarshal(data, &echo)
	return resp.StatusCode, resp.Header, echo, string(data)
}

// pods/proxy, services/proxy and nodes/proxy pass requests to the pod's
// IP, to an endpoint of the service, or to a port of the node, with
// upstream's URL forms (name, name:port, scheme:name:port); the client's
// credentials stay with the API server.
func TestProxySubresources(t *testing.T) {
	ts := start(t, nil)
	ip := netnsEcho(t)
	c := context.Background()
	pods := ts.Client.CoreV1().Pods("default")
	pod := testPod("web", "")
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	p, err := pods.Create(c, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	if p, err = pods.UpdateStatus(c, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	loop := testPod("loop", "")
	if loop, err = pods.Create(c, loop, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	loop.Status.PodIP, loop.Status.PodIPs = "127.0.0.1", []corev1.PodIP{{IP: "127.0.0.1"}}
	if _, err := pods.UpdateStatus(c, loop, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Client.CoreV1().Services("default").Create(c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Client.CoreV1().Endpoints("default").Create(c, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: ip, TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", UID: p.UID}}},
			Ports:     []corev1.EndpointPort{{Name: "http", Port: 8080}},
		}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Client.CoreV1().Services("default").Create(c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "empty"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"none": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "proxy-node"}, Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
	}}
	if _, err := ts.Client.CoreV1().Nodes().Create(c, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantPath, wantQuery      string
		wantIn                   string
	}{
		{name: "pod, its first container port", method: "GET", path: "/api/v1/namespaces/default/pods/web/proxy/echo/a%2Fb?x=1&y=2",
			wantCode: 200, wantPath: "/echo/a%2Fb", wantQuery: "x=1&y=2"},
		{name: "pod, scheme and port", method: "POST", path: "/api/v1/namespaces/default/pods/http:web:8080/proxy/post", body: "hello",
			wantCode: 200, wantPath: "/post"},
		{name: "pod, trailing slash", method: "PUT", path: "/api/v1/namespaces/default/pods/web:8080/proxy/dir/", body: "x",
			wantCode: 200, wantPath: "/dir/"},
		{name: "pod root redirects", method: "GET", path: "/api/v1/namespaces/default/pods/web/proxy?a=b",
			wantCode: http.StatusMovedPermanently},
		{name: "pod root", method: "DELETE", path: "/api/v1/namespaces/default/pods/web/proxy",
			wantCode: 200, wantPath: "/"},
		{name: "pod on loopback", method: "GET", path: "/api/v1/namespaces/default/pods/loop:8080/proxy/",
			wantCode: 400, wantIn: "address not allowed"},
		{name: "pod port nothing listens on", method: "GET", path: "/api/v1/namespaces/default/pods/web:8081/proxy/",
			wantCode: 503, wantIn: "error trying to reach service"},
		{name: "bad name", method: "GET", path: "/api/v1/namespaces/default/pods/ftp:web:80/proxy/",
			wantCode: 400, wantIn: "invalid pod request"},
		{name: "service by port number", method: "GET", path: "/api/v1/namespaces/default/services/web:80/proxy/svc?q=1",
			wantCode: 200, wantPath: "/svc", wantQuery: "q=1"},
		{name: "service by port name", method: "PATCH", path: "/api/v1/namespaces/default/services/http:web:http/proxy/p", body: "{}",
			wantCode: 200, wantPath: "/p"},
		{name: "service port not found", method: "GET", path: "/api/v1/namespaces/default/services/web:81/proxy/",
			wantCode: 503, wantIn: `no service port 81 found for service \"web\"`},
		{name: "service without endpoints", method: "GET", path: "/api/v1/namespaces/default/services/empty/proxy/",
			wantCode: 404},
		{name: "node, another port", method: "GET", path: "/api/v1/nodes/proxy-node:8080/proxy/node?n=1",
			wantCode: 200, wantPath: "/node", wantQuery: "n=1"},
		{name: "node, the kubelet's port", method: "GET", path: "/api/v1/nodes/proxy-node/proxy/healthz",
			wantCode: 503, wantIn: "error trying to reach service"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, header, echo, raw := rawWithToken(t, ts, tc.method, tc.path, tc.body)
			if code != tc.wantCode {
				t.Fatalf("%d %s, want %d", code, raw, tc.wantCode)
			}
			if tc.wantIn != "" && !strings.Contains(raw, tc.wantIn) {
				t.Errorf("answer %s, want %s in it", raw, tc.wantIn)
			}
			if code == http.StatusMovedPermanently {
				if loc := header.Get("Location"); loc != "/api/v1/namespaces/default/pods/web/proxy/?a=b" {
					t.Errorf("Location %q", loc)
				}
				return
			}
			if tc.wantPath == "" {
				return
			}
			if echo["method"] != tc.method || echo["path"] != tc.wantPath || echo["query"] != tc.wantQuery || echo["body"] != tc.body {
				t.Errorf("backend saw %v, want %s %s?%s body %q", echo, tc.method, tc.wantPath, tc.wantQuery, tc.body)
			}
			if echo["authorization"] != "" || echo["forwardedFor"] == "" || echo["host"] != strings.TrimPrefix(ts.URL, "https://") {
				t.Errorf("backend headers: authorization %q, X-Forwarded-For %q, Host %q", echo["authorization"], echo["forwardedFor"], echo["host"])
			}
		})
	}

	// Links in HTML answers and redirects to the backend go through the
	// proxy path; the backend's CORS headers do not reach the client.
	const base = "/api/v1/namespaces/default/pods/web:8080/proxy"
	code, header, _, page := rawWithToken(t, ts, "GET", base+"/page", "")
	if code != 200 || !strings.Contains(page, `href="`+base+`/docs/a"`) || !strings.Contains(page, `src="`+base+`/img.png"`) ||
		!strings.Contains(page, `href="https://example.com/x"`) || header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("html page: %d %v %s", code, header, page)
	}
	code, header, _, _ = rawWithToken(t, ts, "GET", base+"/moved", "")
	if code != http.StatusFound || header.Get("Location") != base+"/new/place" {
		t.Errorf("redirect: %d Location %q", code, header.Get("Location"))
	}

	// Discovery lists the subresources with upstream's kinds.
	res, err := ts.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"pods/proxy": "PodProxyOptions", "services/proxy": "ServiceProxyOptions", "nodes/proxy": "NodeProxyOptions"}
	for _, r := range res.APIResources {
		if k, ok := want[r.Name]; ok {
			if r.Kind != k || strings.Join(r.Verbs, ",") != "create,delete,get,patch,update" {
				t.Errorf("%s: kind %s verbs %v", r.Name, r.Kind, r.Verbs)
			}
			delete(want, r.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("not in discovery: %v", want)
	}
}
