package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"
	"k8s.io/utils/ptr"
)

// apiClient calls the kubelet API as the API server does, with its
// kubelet-client certificate.
type apiClient struct {
	base    string
	pki     string
	http    *http.Client
	restCfg *rest.Config
}

func (e *env) apiClient(t *testing.T, k *runningKubelet, certName string) *apiClient {
	t.Helper()
	crt, key := filepath.Join(e.ts.PKIDir, certName+".crt"), filepath.Join(e.ts.PKIDir, certName+".key")
	tlsCfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the kubelet's serving certificate is self-signed in tests
	if certName != "" {
		pair, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			t.Fatal(err)
		}
		tlsCfg.Certificates = []tls.Certificate{pair}
	}
	c := &apiClient{base: "https://" + k.cfg.Addr(), pki: e.ts.PKIDir,
		http: &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 30 * time.Second}}
	c.restCfg = &rest.Config{Host: c.base, TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertFile: crt, KeyFile: key}}
	return c
}

// get returns the status code and body of a GET.
func (c *apiClient) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := c.http.Get(c.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// exec runs cmd in a container through the WebSocket (v5) executor.
func (c *apiClient) exec(ctx context.Context, ns, pod, container string, stdin io.Reader, cmd ...string) (string, string, error) {
	q := url.Values{"command": cmd, "stdout": {"true"}, "stderr": {"true"}}
	if stdin != nil {
		q.Set("stdin", "true")
	}
	ex, err := remotecommand.NewWebSocketExecutor(c.restCfg, "GET", fmt.Sprintf("%s/exec/%s/%s/%s?%s", c.base, ns, pod, container, q.Encode()))
	if err != nil {
		return "", "", err
	}
	var stdout, stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Stderr: &stderr})
	return stdout.String(), stderr.String(), err
}

// apiPod has a container that logs three lines, waits for /tmp/go, logs
// a fourth and exits 3 (and is restarted), and an httpd on port 8080.
func apiPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{
				{Name: "log", Image: "busybox", Command: []string{"sh", "-c",
					"echo one; echo two; echo three; while [ ! -f /tmp/go ]; do sleep 0.1; done; echo four; exit 3"}},
				{Name: "web", Image: "busybox", Command: []string{"sh", "-c",
					"echo hello-port-forward > /tmp/index.html; exec httpd -f -p 8080 -h /tmp"}},
			},
		},
	}
}

// TestKubeletAPI checks containerLogs, exec and portForward against real
// containers, with the API server's client certificate.
func TestKubeletAPI(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	// The production logging driver, as make build installs it.
	e.logDriver = filepath.Join(t.TempDir(), "skiff-log-driver")
	if out, err := osexec.Command("go", "build", "-o", e.logDriver, "skiff.dev/kubelet/cmd/skiff-log-driver").CombinedOutput(); err != nil {
		t.Fatalf("building skiff-log-driver: %v\n%s", err, out)
	}
	k := e.startKubelet(t)
	e.makeReady(t)
	p := e.createPod(t, apiPod())
	poll(t, 60*time.Second, "pod api to run", func() (bool, string) {
		p = e.getPod(t, "api")
		return p.Status.Phase == corev1.PodRunning && condition(p, corev1.ContainersReady) == corev1.ConditionTrue, fmt.Sprintf("%+v", p.Status.ContainerStatuses)
	})
	api := e.apiClient(t, k, "apiserver-kubelet-client")
	logs := "/containerLogs/default/api/log"

	t.Run("authentication and authorization", func(t *testing.T) {
		if code, body := e.apiClient(t, k, "").get(t, logs); code != http.StatusUnauthorized {
			t.Errorf("without a client certificate: %d %s, want 401", code, body)
		}
		if code, body := e.apiClient(t, k, "kubelet-"+nodeName+"-client").get(t, logs); code != http.StatusForbidden {
			t.Errorf("as the node: %d %s, want 403", code, body)
		}
		if code, body := e.apiClient(t, k, "admin").get(t, logs); code != http.StatusOK {
			t.Errorf("as a system:masters admin: %d %s, want 200", code, body)
		}
		if code, _ := api.get(t, "/containerLogs/default/nope/log"); code != http.StatusNotFound {
			t.Errorf("unknown pod: %d, want 404", code)
		}
		if code, _ := api.get(t, logs+"?tailLines=x"); code != http.StatusBadRequest {
			t.Errorf("bad tailLines: %d, want 400", code)
		}
	})

	t.Run("logs", func(t *testing.T) {
		poll(t, 10*time.Second, "three lines of log", func() (bool, string) {
			code, body := api.get(t, logs)
			return code == http.StatusOK && body == "one\ntwo\nthree\n", fmt.Sprintf("%d %q", code, body)
		})
		for _, tc := range []struct {
			name, query, want string
		}{
			{"tail", "?tailLines=1", "three\n"},
			{"tail zero", "?tailLines=0", ""},
			{"limit", "?limitBytes=5", "one\nt"},
			{"since", "?sinceSeconds=3600", "one\ntwo\nthree\n"},
		} {
			if code, body := api.get(t, logs+tc.query); code != http.StatusOK || body != tc.want {
				t.Errorf("%s: %d %q, want %q", tc.name, code, body, tc.want)
			}
		}
		file, err := os.ReadFile(filepath.Join(e.rootDir, "logs", string(p.UID), "log", "0.log"))
		if err != nil || !regexp.MustCompile(`^\S+Z stdout F one\n\S+Z stdout F two\n`).Match(file) {
			t.Errorf("log file is not in the CRI format: %q, %v", file, err)
		}
		_, body := api.get(t, logs+"?timestamps=true")
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("timestamps: %q", body)
		}
		for i, want := range []string{"one", "two", "three"} {
			ts, text, _ := strings.Cut(lines[i], " ")
			at, err := time.Parse(time.RFC3339Nano, ts)
			if err != nil || text != want || time.Since(at) > 5*time.Minute || time.Since(at) < 0 {
				t.Errorf("timestamped line %q: time %v (%v), text %q", lines[i], at, err, text)
			}
		}
	})

	t.Run("exec", func(t *testing.T) {
		out, errOut, err := api.exec(ctx, "default", "api", "log", nil, "echo", "hi")
		if err != nil || out != "hi\n" || errOut != "" {
			t.Errorf("echo hi: stdout %q stderr %q err %v", out, errOut, err)
		}
		out, errOut, err = api.exec(ctx, "default", "api", "log", nil, "sh", "-c", "echo out; echo oops >&2; exit 3")
		var exitErr exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 3 || out != "out\n" || errOut != "oops\n" {
			t.Errorf("exit 3: stdout %q stderr %q err %v (%T)", out, errOut, err, err)
		}
		out, _, err = api.exec(ctx, "default", "api", "log", strings.NewReader("from stdin"), "cat")
		if err != nil || out != "from stdin" {
			t.Errorf("cat with stdin: %q, %v", out, err)
		}
		_, _, err = api.exec(ctx, "default", "api", "nope", nil, "true")
		if err == nil {
			t.Errorf("exec in an unknown container succeeded")
		}
	})

	t.Run("port-forward reaches the pod's httpd", func(t *testing.T) {
		got := portForwardGET(t, api, "/portForward/default/api?port=8080")
		if !strings.Contains(got, "200 OK") || !strings.Contains(got, "hello-port-forward") {
			t.Errorf("response through the port-forward: %q", got)
		}
	})

	t.Run("follow ends when the container exits, previous after the restart", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api.base+logs+"?follow=true&tailLines=1", nil)
		resp, err := api.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		if line, err := r.ReadString('\n'); err != nil || line != "three\n" {
			t.Fatalf("first followed line %q, %v", line, err)
		}
		if _, _, err := api.exec(ctx, "default", "api", "log", nil, "touch", "/tmp/go"); err != nil {
			t.Fatalf("touch /tmp/go: %v", err)
		}
		if line, err := r.ReadString('\n'); err != nil || line != "four\n" {
			t.Errorf("followed line after the trigger %q, %v", line, err)
		}
		if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
			t.Errorf("follow did not end cleanly after the exit: %q, %v", rest, err)
		}
		poll(t, 30*time.Second, "the restarted log container", func() (bool, string) {
			p = e.getPod(t, "api")
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == "log" {
					return cs.RestartCount == 1 && cs.State.Running != nil, fmt.Sprintf("%+v", cs)
				}
			}
			return false, "no status"
		})
		if code, body := api.get(t, logs+"?previous=true"); code != http.StatusOK || body != "one\ntwo\nthree\nfour\n" {
			t.Errorf("previous: %d %q", code, body)
		}
		poll(t, 10*time.Second, "the new container's log", func() (bool, string) {
			code, body := api.get(t, logs)
			return code == http.StatusOK && body == "one\ntwo\nthree\n", fmt.Sprintf("%d %q", code, body)
		})
	})
}

// portForwardGET sends an HTTP/1.0 GET through a WebSocket port-forward
// and returns what came back on the data channel.
func portForwardGET(t *testing.T, c *apiClient, path string) string {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(c.pki, "apiserver-kubelet-client.crt"), filepath.Join(c.pki, "apiserver-kubelet-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	d := websocket.Dialer{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}}, //nolint:gosec // self-signed test cert
		Subprotocols:    []string{"v4.channel.k8s.io"}, HandshakeTimeout: 10 * time.Second,
	}
	ws, resp, err := d.Dial("wss"+strings.TrimPrefix(c.base, "https")+path, nil)
	if err != nil {
		t.Fatalf("dialing the port-forward: %v (%v)", err, resp)
	}
	defer ws.Close()
	if got := ws.Subprotocol(); got != "v4.channel.k8s.io" {
		t.Errorf("negotiated subprotocol %q", got)
	}
	_ = ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	prefixes := map[byte]uint16{}
	for len(prefixes) < 2 {
		_, msg, err := ws.ReadMessage()
		if err != nil || len(msg) != 3 {
			t.Fatalf("port prefix message %v, %v", msg, err)
		}
		prefixes[msg[0]] = binary.LittleEndian.Uint16(msg[1:])
	}
	if prefixes[0] != 8080 || prefixes[1] != 8080 {
		t.Fatalf("port prefixes %v, want 8080 on channels 0 and 1", prefixes)
	}
	if err := ws.WriteMessage(websocket.BinaryMessage, append([]byte{0}, "GET /index.html HTTP/1.0\r\n\r\n"...)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for !strings.Contains(got.String(), "hello-port-forward") {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			break
		}
		switch {
		case len(msg) > 0 && msg[0] == 0:
			got.Write(msg[1:])
		case len(msg) > 1 && msg[0] == 1:
			t.Errorf("error channel: %s", msg[1:])
		}
	}
	return got.String()
}

// assignPodCIDR waits for the node to register and gives it its pod CIDR,
// as the controller manager's IPAM would.
func (e *env) assignPodCIDR(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	poll(t, 30*time.Second, "the node to register", func() (bool, string) {
		_, err := e.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, e.podCIDR, e.podCIDR)
	if _, err := e.client.CoreV1().Nodes().Patch(ctx, nodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// makeReady gives the node its pod CIDR and waits for it to be Ready.
func (e *env) makeReady(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	e.assignPodCIDR(t)
	poll(t, 30*time.Second, "the node to be Ready", func() (bool, string) {
		n, err := e.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		r := nodeReady(n)
		return r != nil && r.Status == corev1.ConditionTrue, fmt.Sprintf("%+v", r)
	})
}
