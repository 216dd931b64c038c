package integration

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
)

const (
	wardleGroup   = "wardle.example.com"
	wardleVersion = "v1alpha1"
)

// seenRequest is what the aggregated backend saw of one request.
type seenRequest struct {
	path          string
	header        http.Header
	clientCN      string
	authorization string
}

// wardleBackend is a tiny aggregated API server on this host's address
// (an EndpointSlice may not point at loopback, as upstream's validation): discovery of
// wardle.example.com/v1alpha1 with one resource, flunders, and its list.
type wardleBackend struct {
	ip       string
	port     int
	caBundle []byte
	srv      *http.Server
	mu       sync.Mutex
	seen     []seenRequest
}

func (b *wardleBackend) last(path string) (seenRequest, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.seen) - 1; i >= 0; i-- {
		if b.seen[i].path == path {
			return b.seen[i], true
		}
	}
	return seenRequest{}, false
}

// startWardle serves with a certificate for wardle.default.svc, and asks
// for client certificates signed by frontProxyCA.
func startWardle(t *testing.T, frontProxyCA *certs.CA) *wardleBackend {
	t.Helper()
	ca, err := certs.NewCA("wardle-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueServingCert(ca, "wardle", nil, []string{"wardle.default.svc"})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := kp.KeyPEM()
	cert, err := tls.X509KeyPair(kp.CertPEM(), key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", net.JoinHostPort(hostIP(t), "0"), &tls.Config{
		Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: frontProxyCA.Pool(),
		NextProtos: []string{"http/1.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := &wardleBackend{ip: l.Addr().(*net.TCPAddr).IP.String(), port: l.Addr().(*net.TCPAddr).Port, caBundle: ca.CertPEM()}
	gv := wardleGroup + "/" + wardleVersion
	b.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seenRequest{path: r.URL.Path, header: r.Header.Clone(), authorization: r.Header.Get("Authorization")}
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			s.clientCN = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		b.mu.Lock()
		b.seen = append(b.seen, s)
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/" + gv:
			_ = json.NewEncoder(w).Encode(&metav1.APIResourceList{
				TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv,
				APIResources: []metav1.APIResource{{Name: "flunders", SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: []string{"get", "list"}}},
			})
		case "/openapi/v3/apis/" + gv:
			fmt.Fprint(w, `{"openapi":"3.0.0","info":{"title":"wardle","version":"v1alpha1"},"paths":{}}`)
		case "/apis/" + gv + "/namespaces/default/flunders":
			fmt.Fprintf(w, `{"kind":"FlunderList","apiVersion":%q,"metadata":{},"items":[{"kind":"Flunder","apiVersion":%q,"metadata":{"name":"f1","namespace":"default"}}]}`, gv, gv)
		case "/apis/" + gv + "/namespaces/default/flunders/f1/exec":
			// An upgrade, as exec: 101, then an echo of one line.
			if !strings.EqualFold(r.Header.Get("Upgrade"), "echo") {
				http.Error(w, "upgrade required", http.StatusBadRequest)
				return
			}
			conn, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			_ = brw.Flush()
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			_, _ = brw.WriteString("echo: " + line)
			_ = brw.Flush()
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"reason":"NotFound"}`)
		}
	})}
	go func() { _ = b.srv.Serve(l) }()
	t.Cleanup(func() { _ = b.srv.Close() })
	return b
}

// hostIP is the first non-loopback IPv4 address of an up interface, the
// one the test server advertises.
func hostIP(t *testing.T) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLinkLocalUnicast() {
				return ipn.IP.String()
			}
		}
	}
	t.Fatal("no non-loopback IPv4 address on this host")
	return ""
}

// startWithFrontProxy starts the API server with a front-proxy client
// certificate from a CA of the test's own, checking APIServices every
// 100ms.
func startWithFrontProxy(t *testing.T) (*testserver.TestServer, *certs.CA) {
	t.Helper()
	ca, err := certs.NewCA("front-proxy-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueClientCert(ca, "front-proxy-client", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := certs.WriteKeyPair(dir, "front-proxy-client", kp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "front-proxy-ca.crt"), ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := start(t, func(o *server.Options) {
		o.ProxyClientCertFile = certs.CertFile(dir, "front-proxy-client")
		o.ProxyClientKeyFile = certs.KeyFile(dir, "front-proxy-client")
		o.RequestHeaderClientCAFile = filepath.Join(dir, "front-proxy-ca.crt")
		o.RequestHeaderAllowedNames = []string{"front-proxy-client"}
		o.APIServiceResyncInterval = 100 * time.Millisecond
	})
	return ts, ca
}

func getAPIService(t *testing.T, ts *testserver.TestServer, name string) (*apiregistrationv1.APIService, error) {
	t.Helper()
	code, body := raw(t, ts, http.MethodGet, "/apis/apiregistration.k8s.io/v1/apiservices/"+name, "", nil)
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET apiservice %s: %d %s", name, code, body)
	}
	api := &apiregistrationv1.APIService{}
	if err := json.Unmarshal(body, api); err != nil {
		return nil, err
	}
	return api, nil
}

func availableCondition(api *apiregistrationv1.APIService) (apiregistrationv1.APIServiceCondition, bool) {
	for _, c := range api.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c, true
		}
	}
	return apiregistrationv1.APIServiceCondition{}, false
}

// waitAvailable waits for the APIService's Available condition to have
// status and reason.
func waitAvailable(t *testing.T, ts *testserver.TestServer, name string, status apiregistrationv1.ConditionStatus, reason string) {
	t.Helper()
	err := waitFor(t, func() error {
		api, err := getAPIService(t, ts, name)
		if err != nil {
			return err
		}
		c, ok := availableCondition(api)
		if !ok || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Available = %+v, want %s %s", c, status, reason)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func postJSON(t *testing.T, ts *testserver.TestServer, path string, obj any) (int, []byte) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return raw(t, ts, http.MethodPost, path, "application/json", data)
}

func wardleAPIService(caBundle []byte) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"},
		ObjectMeta: metav1.ObjectMeta{Name: wardleVersion + "." + wardleGroup},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: wardleGroup, Version: wardleVersion, GroupPriorityMinimum: 2000, VersionPriority: 200,
			Service:  &apiregistrationv1.ServiceReference{Namespace: "default", Name: "wardle", Port: ptr.To[int32](443)},
			CABundle: caBundle,
		},
	}
}

// createWardleService creates the Service default/wardle on port 443 and
// an EndpointSlice that points it at the backend.
func createWardleService(t *testing.T, ts *testserver.TestServer, ip string, port int) {
	t.Helper()
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "wardle"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port))}}},
	}
	if code, body := postJSON(t, ts, "/api/v1/namespaces/default/services", svc); code != http.StatusCreated {
		t.Fatalf("creating the service: %d %s", code, body)
	}
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Name: "wardle-1", Labels: map[string]string{discoveryv1.LabelServiceName: "wardle"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if code, body := postJSON(t, ts, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", slice); code != http.StatusCreated {
		t.Fatalf("creating the endpointslice: %d %s", code, body)
	}
}

// requestAs sends a GET with a bearer token and extra headers.
func requestAs(t *testing.T, ts *testserver.TestServer, token, path string, header http.Header) (int, []byte) {
	t.Helper()
	// The token, not the admin's certificate, names the user.
	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func TestAggregatorProxiesToAnAPIServiceBackend(t *testing.T) {
	ts, frontProxyCA := startWithFrontProxy(t)
	backend := startWardle(t, frontProxyCA)
	createWardleService(t, ts, backend.ip, backend.port)
	name := wardleVersion + "." + wardleGroup
	if code, body := postJSON(t, ts, "/apis/apiregistration.k8s.io/v1/apiservices", wardleAPIService(backend.caBundle)); code != http.StatusCreated {
		t.Fatalf("creating the APIService: %d %s", code, body)
	}
	waitAvailable(t, ts, name, apiregistrationv1.ConditionTrue, "Passed")

	// A GET is proxied, with the user in the X-Remote- headers; what the
	// client sent in them, its token and impersonation headers do not
	// reach the backend; the aggregator's client certificate does.
	listPath := "/apis/" + wardleGroup + "/" + wardleVersion + "/namespaces/default/flunders"
	forged := http.Header{"X-Remote-User": {"mallory"}, "X-Remote-Group": {"evil"}, "X-Remote-Extra-Scopes": {"all"}}
	code, body := requestAs(t, ts, "test-admin-token", listPath, forged)
	if code != http.StatusOK || !strings.Contains(string(body), `"name":"f1"`) {
		t.Fatalf("GET %s: %d %s", listPath, code, body)
	}
	seen, ok := backend.last(listPath)
	if !ok {
		t.Fatalf("the backend saw no %s", listPath)
	}
	if got := seen.header.Values("X-Remote-User"); len(got) != 1 || got[0] != "test-admin" {
		t.Errorf("X-Remote-User = %v, want [test-admin]", got)
	}
	groups := seen.header.Values("X-Remote-Group")
	if strings.Join(groups, ",") != "system:masters,system:authenticated" {
		t.Errorf("X-Remote-Group = %v, want [system:masters system:authenticated]", groups)
	}
	if v := seen.header.Values("X-Remote-Extra-Scopes"); len(v) != 0 {
		t.Errorf("the client's X-Remote-Extra-Scopes reached the backend: %v", v)
	}
	if seen.authorization != "" {
		t.Errorf("the client's Authorization header reached the backend: %q", seen.authorization)
	}
	if seen.clientCN != "front-proxy-client" {
		t.Errorf("the backend saw client certificate %q, want front-proxy-client", seen.clientCN)
	}

	// Discovery: /apis lists the group, /apis/<group> answers, the
	// aggregated document carries its resources.
	code, body = raw(t, ts, http.MethodGet, "/apis", "", nil)
	var groups2 metav1.APIGroupList
	if err := json.Unmarshal(body, &groups2); code != http.StatusOK || err != nil {
		t.Fatalf("/apis: %d %v %s", code, err, body)
	}
	found := false
	for _, g := range groups2.Groups {
		if g.Name == wardleGroup {
			found = g.PreferredVersion.Version == wardleVersion
		}
	}
	if !found {
		t.Errorf("/apis lacks %s with preferred version %s: %s", wardleGroup, wardleVersion, body)
	}
	if groups2.Groups[0].Name != "apiregistration.k8s.io" {
		t.Errorf("/apis starts with %s, want apiregistration.k8s.io", groups2.Groups[0].Name)
	}
	code, body = raw(t, ts, http.MethodGet, "/apis/"+wardleGroup, "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"preferredVersion":{"groupVersion":"wardle.example.com/v1alpha1"`) {
		t.Errorf("/apis/%s: %d %s", wardleGroup, code, body)
	}
	code, body = raw(t, ts, http.MethodGet, "/apis/"+wardleGroup+"/"+wardleVersion, "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"flunders"`) {
		t.Errorf("/apis/%s/%s: %d %s", wardleGroup, wardleVersion, code, body)
	}
	resp, body := getAccept(t, ts, "/apis", kubectlDiscoveryAccept)
	var agg apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &agg); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("aggregated /apis: %d %v", resp.StatusCode, err)
	}
	found = false
	for _, g := range agg.Items {
		if g.Name == wardleGroup && len(g.Versions) == 1 && len(g.Versions[0].Resources) == 1 && g.Versions[0].Resources[0].Resource == "flunders" {
			found = true
		}
	}
	if !found {
		t.Errorf("the aggregated /apis lacks %s/%s with flunders", wardleGroup, wardleVersion)
	}

	// OpenAPI v3: the discovery document names the group-version, whose
	// document is the backend's.
	code, body = raw(t, ts, http.MethodGet, "/openapi/v3", "", nil)
	var v3 struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &v3); code != http.StatusOK || err != nil {
		t.Fatalf("/openapi/v3: %d %v", code, err)
	}
	if _, ok := v3.Paths["api/v1"]; !ok {
		t.Errorf("/openapi/v3 lost api/v1")
	}
	if p := v3.Paths["apis/"+wardleGroup+"/"+wardleVersion].ServerRelativeURL; p == "" {
		t.Errorf("/openapi/v3 lacks apis/%s/%s", wardleGroup, wardleVersion)
	} else if code, body := raw(t, ts, http.MethodGet, p, "", nil); code != http.StatusOK || !strings.Contains(string(body), `"title":"wardle"`) {
		t.Errorf("GET %s: %d %s", p, code, body)
	}

	// The real kubectl discovers the group and lists through the aggregator.
	if _, err := os.Stat("/usr/bin/kubectl"); err == nil {
		if out := mustKubectl(t, ctx(t), ts, "api-resources", "--api-group="+wardleGroup, "-o", "name"); strings.TrimSpace(out) != "flunders."+wardleGroup {
			t.Errorf("kubectl api-resources --api-group=%s: %q", wardleGroup, out)
		}
		if out := mustKubectl(t, ctx(t), ts, "get", "flunders", "-n", "default", "-o", "name"); strings.TrimSpace(out) != "flunder."+wardleGroup+"/f1" {
			t.Errorf("kubectl get flunders: %q", out)
		}
	}

	// An upgrade passes through: 101, then the backend's echo.
	upgradePath := "/apis/" + wardleGroup + "/" + wardleVersion + "/namespaces/default/flunders/f1/exec"
	if got := upgradeEcho(t, ts, upgradePath, "hello\n"); got != "echo: hello\n" {
		t.Errorf("through the upgraded connection: %q", got)
	}

	// The backend stops answering: FailedDiscoveryCheck, and requests are
	// refused with a 503 Status.
	_ = backend.srv.Close()
	waitAvailable(t, ts, name, apiregistrationv1.ConditionFalse, "FailedDiscoveryCheck")
	code, body = rawAccept(t, ts, http.MethodGet, "/metrics", "", "text/plain", nil)
	for _, want := range []string{
		`aggregator_unavailable_apiservice{name="v1alpha1.wardle.example.com"} 1`,
		`aggregator_unavailable_apiservice_total{name="v1alpha1.wardle.example.com",reason="FailedDiscoveryCheck"} `,
		`aggregator_unavailable_apiservice{name="v1.apps"} 0`,
	} {
		if code != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
	code, body = raw(t, ts, http.MethodGet, listPath, "", nil)
	if st := status(t, body); code != http.StatusServiceUnavailable || st.Reason != metav1.StatusReasonServiceUnavailable {
		t.Errorf("GET through an unavailable APIService: %d %s", code, body)
	}
	if _, body := raw(t, ts, http.MethodGet, "/openapi/v3", "", nil); strings.Contains(string(body), "apis/"+wardleGroup) {
		t.Errorf("/openapi/v3 names %s while it is unavailable", wardleGroup)
	}
	resp, body = getAccept(t, ts, "/apis", kubectlDiscoveryAccept)
	agg = apidiscoveryv2.APIGroupDiscoveryList{}
	_ = json.Unmarshal(body, &agg)
	for _, g := range agg.Items {
		if g.Name == wardleGroup {
			t.Errorf("the aggregated /apis lists %s while it is unavailable", wardleGroup)
		}
	}
	// Its endpoints go: MissingEndpoints; its Service goes: ServiceNotFound.
	if code, body := raw(t, ts, http.MethodDelete, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/wardle-1", "", nil); code != http.StatusOK {
		t.Fatalf("deleting the endpointslice: %d %s", code, body)
	}
	waitAvailable(t, ts, name, apiregistrationv1.ConditionFalse, "MissingEndpoints")
	if code, body := raw(t, ts, http.MethodDelete, "/api/v1/namespaces/default/services/wardle", "", nil); code != http.StatusOK {
		t.Fatalf("deleting the service: %d %s", code, body)
	}
	waitAvailable(t, ts, name, apiregistrationv1.ConditionFalse, "ServiceNotFound")
}

// upgradeEcho opens path with an HTTP/1.1 upgrade to "echo", as the admin,
// sends line and returns what comes back.
func upgradeEcho(t *testing.T, ts *testserver.TestServer, path, line string) string {
	t.Helper()
	c, err := ts.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.URL, "https://"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n", path, strings.TrimPrefix(ts.URL, "https://"))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("upgrade: %d %s", resp.StatusCode, body)
	}
	fmt.Fprint(conn, line)
	got, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestAPIServiceValidation(t *testing.T) {
	ts := start(t, nil)
	for _, tc := range []struct {
		name   string
		mutate func(*apiregistrationv1.APIService)
		field  string
	}{
		{"name not version.group", func(a *apiregistrationv1.APIService) { a.Name = "wardle" }, "metadata.name"},
		{"groupPriorityMinimum zero", func(a *apiregistrationv1.APIService) { a.Spec.GroupPriorityMinimum = 0 }, "spec.groupPriorityMinimum"},
		{"groupPriorityMinimum too high", func(a *apiregistrationv1.APIService) { a.Spec.GroupPriorityMinimum = 20001 }, "spec.groupPriorityMinimum"},
		{"versionPriority too high", func(a *apiregistrationv1.APIService) { a.Spec.VersionPriority = 1001 }, "spec.versionPriority"},
		{"caBundle and insecureSkipTLSVerify", func(a *apiregistrationv1.APIService) { a.Spec.InsecureSkipTLSVerify = true }, "spec.insecureSkipTLSVerify"},
		{"local with a caBundle", func(a *apiregistrationv1.APIService) { a.Spec.Service = nil }, "spec.caBundle"},
		{"service without a name", func(a *apiregistrationv1.APIService) { a.Spec.Service.Name = "" }, "spec.service.name"},
		{"service port out of range", func(a *apiregistrationv1.APIService) { a.Spec.Service.Port = ptr.To[int32](70000) }, "spec.service.port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := wardleAPIService([]byte("-----BEGIN CERTIFICATE-----\n"))
			tc.mutate(api)
			code, body := postJSON(t, ts, "/apis/apiregistration.k8s.io/v1/apiservices", api)
			st := status(t, body)
			if code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid || st.Details == nil {
				t.Fatalf("%d %s", code, body)
			}
			var fields []string
			for _, c := range st.Details.Causes {
				fields = append(fields, c.Field)
			}
			if !strings.Contains(strings.Join(fields, " "), tc.field) {
				t.Errorf("causes name %v, want %s: %s", fields, tc.field, st.Message)
			}
		})
	}
}

func TestLocalAPIServices(t *testing.T) {
	ts := start(t, nil)
	for _, name := range []string{"v1.", "v1.apps", "v1.apiregistration.k8s.io", "v1.authorization.k8s.io", "v1.apiextensions.k8s.io"} {
		waitAvailable(t, ts, name, apiregistrationv1.ConditionTrue, "Local")
		api, err := getAPIService(t, ts, name)
		if err != nil {
			t.Fatal(err)
		}
		if api.Labels["kube-aggregator.kubernetes.io/automanaged"] != "onstart" || api.Spec.Service != nil || api.Spec.GroupPriorityMinimum == 0 {
			t.Errorf("%s = %+v", name, api)
		}
	}
	if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
		t.Skip("no kubectl at /usr/bin/kubectl")
	}
	out := mustKubectl(t, ctx(t), ts, "get", "apiservices")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "NAME SERVICE AVAILABLE AGE" {
		t.Fatalf("header %q", lines[0])
	}
	want := map[string]bool{"v1.": false, "v1.apps": false, "v1.rbac.authorization.k8s.io": false}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if _, ok := want[f[0]]; ok && len(f) == 4 && f[1] == "Local" && f[2] == "True" {
			want[f[0]] = true
		}
	}
	for n, ok := range want {
		if !ok {
			t.Errorf("kubectl get apiservices has no %q Local True row:\n%s", n, out)
		}
	}
	// The kind is described in OpenAPI, from kube-aggregator's definitions.
	if out := mustKubectl(t, ctx(t), ts, "explain", "apiservices.spec.groupPriorityMinimum"); !strings.Contains(out, "GroupPriorityMinimum is the priority this group should have at least") {
		t.Errorf("kubectl explain apiservices.spec.groupPriorityMinimum:\n%s", out)
	}
}

// TestFrontProxyAuthentication: with --requestheader-client-ca-file, a
// request with a front-proxy certificate names its user in the headers;
// a certificate of that CA with another name is refused; the settings are
// published in kube-system/extension-apiserver-authentication.
func TestFrontProxyAuthentication(t *testing.T) {
	ts, frontProxyCA := startWithFrontProxy(t)
	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	clientWith := func(cn string) *http.Client {
		kp, err := certs.IssueClientCert(frontProxyCA, cn, nil)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := kp.KeyPEM()
		cert, err := tls.X509KeyPair(kp.CertPEM(), key)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		}}}
	}
	review := func(c *http.Client) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
			strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Remote-User", "alice")
		req.Header.Add("X-Remote-Group", "team-a")
		req.Header.Add("X-Remote-Group", "team-b")
		req.Header.Set("X-Remote-Extra-Scopes%2Fread", "yes")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	code, body := review(clientWith("front-proxy-client"))
	var ssr authenticationv1.SelfSubjectReview
	if err := json.Unmarshal(body, &ssr); code != http.StatusCreated || err != nil {
		t.Fatalf("SelfSubjectReview through the front proxy: %d %s", code, body)
	}
	ui := ssr.Status.UserInfo
	if ui.Username != "alice" || strings.Join(ui.Groups, ",") != "team-a,team-b,system:authenticated" || len(ui.Extra["scopes/read"]) != 1 {
		t.Errorf("user = %+v", ui)
	}
	if code, body := review(clientWith("someone-else")); code != http.StatusUnauthorized {
		t.Errorf("a front-proxy certificate not among the allowed names: %d %s", code, body)
	}

	var cm corev1.ConfigMap
	err = waitFor(t, func() error {
		code, body := raw(t, ts, http.MethodGet, "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", "", nil)
		if code != http.StatusOK {
			return fmt.Errorf("%d %s", code, body)
		}
		return json.Unmarshal(body, &cm)
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"client-ca-file": string(ca.CertPEM()), "requestheader-client-ca-file": string(frontProxyCA.CertPEM()),
		"requestheader-allowed-names": `["front-proxy-client"]`, "requestheader-username-headers": `["X-Remote-User"]`,
		"requestheader-group-headers": `["X-Remote-Group"]`, "requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
	} {
		if cm.Data[k] != want {
			t.Errorf("%s = %q, want %q", k, cm.Data[k], want)
		}
	}
	if code, body := raw(t, ts, http.MethodGet, "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles/extension-apiserver-authentication-reader", "", nil); code != http.StatusOK {
		t.Errorf("the reader Role: %d %s", code, body)
	}
	if code, body := raw(t, ts, http.MethodGet, "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:auth-delegator", "", nil); code != http.StatusOK {
		t.Errorf("the system:auth-delegator ClusterRole: %d %s", code, body)
	}
}

// TestCRDAPIServices: a CRD's served group-versions get local APIServices
// (automanaged "true", priorities 1000 and 100, as upstream's CRD
// registration), removed with the CRD.
func TestCRDAPIServices(t *testing.T) {
	ts := start(t, nil)
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.things.example.com"},
"spec":{"group":"things.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
{"name":"v2","served":false,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`
	if code, body := raw(t, ts, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", []byte(crd)); code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", code, body)
	}
	waitAvailable(t, ts, "v1.things.example.com", apiregistrationv1.ConditionTrue, "Local")
	api, err := getAPIService(t, ts, "v1.things.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if api.Labels["kube-aggregator.kubernetes.io/automanaged"] != "true" || api.Spec.GroupPriorityMinimum != 1000 || api.Spec.VersionPriority != 100 || api.Spec.Service != nil {
		t.Errorf("v1.things.example.com = %+v", api)
	}
	if code, _ := raw(t, ts, http.MethodGet, "/apis/apiregistration.k8s.io/v1/apiservices/v2.things.example.com", "", nil); code != http.StatusNotFound {
		t.Errorf("an APIService for a version the CRD does not serve: %d", code)
	}
	if code, body := raw(t, ts, http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.things.example.com", "", nil); code != http.StatusOK {
		t.Fatalf("deleting the CRD: %d %s", code, body)
	}
	err = waitFor(t, func() error {
		code, body := raw(t, ts, http.MethodGet, "/apis/apiregistration.k8s.io/v1/apiservices/v1.things.example.com", "", nil)
		if code != http.StatusNotFound {
			return fmt.Errorf("still there: %d %s", code, body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
