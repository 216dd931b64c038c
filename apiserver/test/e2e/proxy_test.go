package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubectlProxy: `kubectl proxy` serves the API on a local plain-HTTP
// port with the kubeconfig's credentials: reads, a write, and a watch go
// through it to the server.
func TestKubectlProxy(t *testing.T) {
	k, ts := newKubectl(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, kubectlPath, "--kubeconfig", k.kubeconfig, "proxy", "--port=0", "--address=127.0.0.1")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	// kubectl prints "Starting to serve on 127.0.0.1:PORT" once listening.
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Starting to serve on (127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("kubectl proxy did not say where it serves within 30s")
	}
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s through kubectl proxy: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}

	code, body := get("/version")
	if code != http.StatusOK || !strings.Contains(string(body), `"gitVersion"`) {
		t.Fatalf("/version: %d %s", code, body)
	}
	code, body = get("/api/v1/namespaces/kube-system")
	var ns corev1.Namespace
	if code != http.StatusOK || json.Unmarshal(body, &ns) != nil || ns.Name != "kube-system" {
		t.Fatalf("namespace through the proxy: %d %s", code, body)
	}
	code, body = get("/api/v1/namespaces/default/configmaps/missing")
	if code != http.StatusNotFound || !strings.Contains(string(body), `"reason":"NotFound"`) {
		t.Errorf("a missing object through the proxy: %d %s", code, body)
	}

	// A write through the proxy.
	resp, err := client.Post(base+"/api/v1/namespaces/default/configmaps", "application/json",
		strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"via-proxy"},"data":{"k":"v"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create through the proxy: %d", resp.StatusCode)
	}
	cm, err := ts.Client.CoreV1().ConfigMaps("default").Get(ctx, "via-proxy", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Fatalf("the ConfigMap created through the proxy: %v %v", cm, err)
	}

	// A watch streams through the proxy: an update made afterwards arrives.
	wreq, _ := http.NewRequestWithContext(ctx, http.MethodGet,
		base+"/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dvia-proxy&resourceVersion="+cm.ResourceVersion, nil)
	wresp, err := (&http.Client{}).Do(wreq)
	if err != nil {
		t.Fatal(err)
	}
	defer wresp.Body.Close()
	if wresp.StatusCode != http.StatusOK {
		t.Fatalf("watch through the proxy: %d", wresp.StatusCode)
	}
	cm.Data["k"] = "changed"
	if _, err := ts.Client.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	events := make(chan metav1.WatchEvent, 1)
	go func() {
		dec := json.NewDecoder(wresp.Body)
		var ev metav1.WatchEvent
		if dec.Decode(&ev) == nil {
			events <- ev
		}
	}()
	var ev metav1.WatchEvent
	select {
	case ev = <-events:
	case <-time.After(20 * time.Second):
		t.Fatal("no watch event through the proxy within 20s")
	}
	if ev.Type != "MODIFIED" || !strings.Contains(string(ev.Object.Raw), `"changed"`) {
		t.Errorf("watch event through the proxy: %s %s", ev.Type, ev.Object.Raw)
	}
}
