package endpoints

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/core/node"
	"skiff.dev/apiserver/pkg/registry/core/pod"
	"skiff.dev/apiserver/pkg/registry/core/service"
)

// The options of a CONNECT request are upstream's kinds, with the values
// upstream's query conversion gives them: what admission and webhooks see.
func TestConnectOptions(t *testing.T) {
	pods := &registry.Store{R: &registry.Resource{Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true, Kubelet: pod.Kubelet, Proxy: pod.Proxy}}
	services := &registry.Store{R: &registry.Resource{Version: "v1", Kind: "Service", Resource: "services", Namespaced: true, Proxy: service.Proxy}}
	nodes := &registry.Store{R: &registry.Resource{Version: "v1", Kind: "Node", Resource: "nodes", Proxy: node.Proxy}}
	tm := func(kind string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: "v1", Kind: kind} }
	for _, tc := range []struct {
		name    string
		s       *registry.Store
		sub     string
		query   string
		path    string
		hasPath bool
		want    runtime.Object
	}{
		{"attach", pods, registry.SubAttach, "container=container1&stdin=true&stdout=1&stderr=false&tty=0", "", false,
			&corev1.PodAttachOptions{TypeMeta: tm("PodAttachOptions"), Container: "container1", Stdin: true, Stdout: true}},
		{"exec", pods, registry.SubExec, "command=ls&command=-l&stdout=TRUE&tty=yes", "", false,
			&corev1.PodExecOptions{TypeMeta: tm("PodExecOptions"), Command: []string{"ls", "-l"}, Stdout: true, TTY: true}},
		{"portforward without ports", pods, registry.SubPortForward, "", "", false,
			&corev1.PodPortForwardOptions{TypeMeta: tm("PodPortForwardOptions")}},
		{"pod proxy", pods, registry.SubProxy, "", "a/b/", true, &corev1.PodProxyOptions{TypeMeta: tm("PodProxyOptions"), Path: "/a/b/"}},
		{"pod proxy root", pods, registry.SubProxy, "", "", true, &corev1.PodProxyOptions{TypeMeta: tm("PodProxyOptions"), Path: "/"}},
		{"pod proxy without path", pods, registry.SubProxy, "", "", false, &corev1.PodProxyOptions{TypeMeta: tm("PodProxyOptions")}},
		{"service proxy", services, registry.SubProxy, "", "healthz", true, &corev1.ServiceProxyOptions{TypeMeta: tm("ServiceProxyOptions"), Path: "/healthz"}},
		{"node proxy", nodes, registry.SubProxy, "", "metrics", true, &corev1.NodeProxyOptions{TypeMeta: tm("NodeProxyOptions"), Path: "/metrics"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			got, err := connectOptions(q, tc.s, tc.sub, tc.path, tc.hasPath)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("connectOptions = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestAggregatedVersion(t *testing.T) {
	for _, tc := range []struct{ accept, want string }{
		{"", ""},
		{"application/json", ""},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", "v2"},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", "v2beta1"},
		{"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", ""},
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList", ""},
		{"application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""},
	} {
		if got := aggregatedVersion(tc.accept); got != tc.want {
			t.Errorf("aggregatedVersion(%q) = %q, want %q", tc.accept, got, tc.want)
		}
	}
}

func TestToResourceDiscovery(t *testing.T) {
	in := []metav1.APIResource{
		{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: []string{"get"}, ShortNames: []string{"po"}, Categories: []string{"all"}},
		{Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}},
		{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: []string{"get"}},
		{Name: "nodes", SingularName: "node", Kind: "Node", Verbs: []string{"list"}},
	}
	out := toResourceDiscovery(in)
	if len(out) != 2 || out[0].Resource != "pods" || out[1].Resource != "nodes" {
		t.Fatalf("resources = %+v", out)
	}
	pods := out[0]
	if pods.Scope != "Namespaced" || out[1].Scope != "Cluster" || pods.SingularResource != "pod" || pods.ResponseKind.Kind != "Pod" ||
		!reflect.DeepEqual(pods.ShortNames, []string{"po"}) || !reflect.DeepEqual(pods.Categories, []string{"all"}) {
		t.Errorf("pods = %+v", pods)
	}
	if len(pods.Subresources) != 2 || pods.Subresources[0].Subresource != "eviction" ||
		*pods.Subresources[0].ResponseKind != (metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}) ||
		pods.Subresources[1].Subresource != "log" || !reflect.DeepEqual(pods.Subresources[1].Verbs, []string{"get"}) {
		t.Errorf("pods subresources = %+v", pods.Subresources)
	}
}

// upgradeBackend answers an upgrade with a 101 that names the requested
// protocol, then echoes bytes; it reports the request headers it saw.
func upgradeBackend(t *testing.T, seen chan<- http.Header) *url.URL {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijacking: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n", r.Header.Get("Upgrade"))
		if p := r.Header.Get("Sec-WebSocket-Protocol"); p != "" {
			fmt.Fprintf(rw, "Sec-WebSocket-Protocol: %s\r\n", strings.TrimSpace(strings.Split(p, ",")[0]))
		}
		if p := r.Header.Get("X-Stream-Protocol-Version"); p != "" {
			fmt.Fprintf(rw, "X-Stream-Protocol-Version: %s\r\n", p)
		}
		fmt.Fprint(rw, "\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(conn, rw)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/portForward/default/web")
	return u
}

// The API server's proxy passes kubectl's upgrades to the kubelet as they
// are: plain SPDY and SPDY tunnelled in a WebSocket.
func TestUpgradeProxy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]string
		// want are request headers the kubelet must see, and response
		// headers the client must get back.
		wantRequest, wantResponse map[string]string
	}{
		{
			name:         "plain SPDY",
			headers:      map[string]string{"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "portforward.k8s.io"},
			wantRequest:  map[string]string{"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "portforward.k8s.io"},
			wantResponse: map[string]string{"Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "portforward.k8s.io"},
		},
		{
			name: "SPDY in a WebSocket",
			headers: map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
				"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "SPDY/3.1+portforward.k8s.io"},
			wantRequest: map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
				"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "SPDY/3.1+portforward.k8s.io"},
			wantResponse: map[string]string{"Upgrade": "websocket", "Sec-WebSocket-Protocol": "SPDY/3.1+portforward.k8s.io"},
		},
		{
			name: "attach over WebSocket v5",
			headers: map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
				"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "v5.channel.k8s.io, v4.channel.k8s.io"},
			wantRequest:  map[string]string{"Upgrade": "websocket", "Sec-WebSocket-Protocol": "v5.channel.k8s.io, v4.channel.k8s.io"},
			wantResponse: map[string]string{"Upgrade": "websocket", "Sec-WebSocket-Protocol": "v5.channel.k8s.io"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := make(chan http.Header, 1)
			loc := upgradeBackend(t, seen)
			front := httptest.NewServer(upgradeProxy(loc, http.DefaultTransport.(*http.Transport).Clone(),
				func(w http.ResponseWriter, _ *http.Request, err error) {
					http.Error(w, err.Error(), http.StatusBadGateway)
				}))
			defer front.Close()
			conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, "POST /api/v1/namespaces/default/pods/web/portforward HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nImpersonate-User: someone\r\n")
			for k, v := range tc.headers {
				fmt.Fprintf(conn, "%s: %s\r\n", k, v)
			}
			fmt.Fprint(conn, "\r\n")
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("status %s, want 101", resp.Status)
			}
			got := <-seen
			for k, v := range tc.wantRequest {
				if got.Get(k) != v {
					t.Errorf("the kubelet saw %s: %q, want %q", k, got.Get(k), v)
				}
			}
			for _, k := range []string{"Authorization", "Impersonate-User"} {
				if got.Get(k) != "" {
					t.Errorf("the kubelet saw the client's %s header", k)
				}
			}
			for k, v := range tc.wantResponse {
				if resp.Header.Get(k) != v {
					t.Errorf("the client got %s: %q, want %q", k, resp.Header.Get(k), v)
				}
			}
			if _, err := conn.Write([]byte("spdy-bytes")); err != nil {
				t.Fatal(err)
			}
			echo := make([]byte, len("spdy-bytes"))
			if _, err := io.ReadFull(br, echo); err != nil || string(echo) != "spdy-bytes" {
				t.Errorf("after the upgrade: %q, %v; want the bytes echoed", echo, err)
			}
		})
	}
}

func TestCheckLogWebSocket(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offered []string
		wantErr bool
	}{
		{"none offered", nil, false},
		{"base64", []string{"base64.binary.k8s.io"}, false},
		{"binary among others", []string{"v4.channel.k8s.io, binary.k8s.io"}, false},
		{"only others", []string{"v4.channel.k8s.io", "channel.k8s.io"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/a/pods/b/log", nil)
			for _, p := range tc.offered {
				r.Header.Add("Sec-WebSocket-Protocol", p)
			}
			err := checkLogWebSocket(r)
			if (err != nil) != tc.wantErr || (err != nil && !apierrors.IsBadRequest(err)) {
				t.Errorf("err = %v, want a BadRequest: %v", err, tc.wantErr)
			}
		})
	}
}

// dataWithEOF returns all its data with io.EOF, as an HTTP body may.
type dataWithEOF struct{ data string }

func (d *dataWithEOF) Read(p []byte) (int, error) {
	n := copy(p, d.data)
	d.data = d.data[n:]
	if d.data == "" {
		return n, io.EOF
	}
	return n, nil
}

func TestErrorAfterData(t *testing.T) {
	r := &errorAfterData{r: &dataWithEOF{data: "last lines\n"}}
	buf := make([]byte, 64)
	if n, err := r.Read(buf); n != len("last lines\n") || err != nil {
		t.Errorf("first read: %d, %v; want the data without the error", n, err)
	}
	for range 2 {
		if n, err := r.Read(buf); n != 0 || err != io.EOF {
			t.Errorf("later read: %d, %v; want io.EOF", n, err)
		}
	}
}
