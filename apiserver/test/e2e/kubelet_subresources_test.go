package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/apiserver/pkg/testserver/fakekubelet"
)

// podOnFakeKubelet registers a fake kubelet as node "fake-node" and
// creates pod "web" (container "app") bound to it.
func podOnFakeKubelet(t *testing.T, ts *testserver.TestServer) *fakekubelet.Kubelet {
	t.Helper()
	k := fakekubelet.Start(t, ts.PKIDir)
	c := t.Context()
	if _, err := ts.Client.CoreV1().Nodes().Create(c, k.Node("fake-node"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "fake-node", Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
	}
	created, err := ts.Client.CoreV1().Pods("default").Create(c, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// kubectl port-forward wants a running pod.
	created.Status.Phase = corev1.PodRunning
	if _, err := ts.Client.CoreV1().Pods("default").UpdateStatus(c, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKubectlPortForward: kubectl v1.32 tries a WebSocket (SPDY tunnelled)
// first, which the API server passes to the kubelet; the fake kubelet, as
// one that speaks only SPDY, refuses it and kubectl falls back to SPDY,
// which the API server proxies too.
func TestKubectlPortForward(t *testing.T) {
	k, ts := newKubectl(t)
	fake := podOnFakeKubelet(t, ts)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath, "--kubeconfig", k.kubeconfig, "port-forward", "pod/web", ":80")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 80`)
	var port string
	for port == "" && lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		t.Fatalf("kubectl port-forward did not start forwarding: %s", stderr.String())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || got != "ping\n" {
		t.Fatalf("echo through the port-forward = %q, %v; kubectl: %s", got, err, stderr.String())
	}
	if ports := fake.ForwardedPorts(); len(ports) == 0 || ports[0] != "80" {
		t.Errorf("kubelet data streams for ports %v, want 80", ports)
	}
	if last := fake.LastRequest(); last.Path != "/portForward/default/web" {
		t.Errorf("kubelet got %s", last)
	}
}

func TestKubectlLogsAndExec(t *testing.T) {
	k, ts := newKubectl(t)
	fake := podOnFakeKubelet(t, ts)

	out := k.run("logs", "web", "--tail=2")
	if out != "line 1\nline 2\nline 3\n" {
		t.Errorf("kubectl logs = %q", out)
	}
	got := fake.LastRequest()
	if got.Path != "/containerLogs/default/web/app" || got.Query().Get("tailLines") != "2" {
		t.Errorf("kubelet got %s", got)
	}

	// With stdin: the fake kubelet answers it as cat would (output written
	// the moment the exec opens may reach kubectl before it can take it; see
	// fakekubelet's exec).
	out = k.runStdin("hi\n", "exec", "-i", "web", "--", "cat")
	if out != "hi\n" {
		t.Errorf("kubectl exec = %q", out)
	}
	got = fake.LastRequest()
	if got.Path != "/exec/default/web/app" || strings.Join(got.Query()["command"], " ") != "cat" || got.Query().Get("input") != "1" {
		t.Errorf("kubelet got %s", got)
	}

	if out, err := k.try("logs", "web", "-c", "nope"); err == nil || !strings.Contains(out, "container nope is not valid for pod web") {
		t.Errorf("kubectl logs -c nope: %v %s", err, out)
	}
}

func TestKubectlAggregatedDiscovery(t *testing.T) {
	k, _ := newKubectl(t)
	out := k.run("api-resources")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^pods\s+po\s+v1\s+true\s+Pod$`),
		regexp.MustCompile(`(?m)^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$`),
		regexp.MustCompile(`(?m)^nodes\s+no\s+v1\s+false\s+Node$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("kubectl api-resources lacks %s:\n%s", want, out)
		}
	}

	// With a fresh cache, kubectl discovers with two requests (/api and
	// /apis, aggregated) rather than one per group-version.
	out = k.run("get", "pods", "-v", "6")
	var discovery []string
	for _, line := range strings.Split(out, "\n") {
		if m := regexp.MustCompile(`"Response" verb="GET" url="https://[^/]+(/apis?(/[^"?]*)?)["?]`).FindStringSubmatch(line); m != nil {
			discovery = append(discovery, m[1])
		} else if m := regexp.MustCompile(`GET https://[^/]+(/apis?(/[^ ?]*)?)[ ?]`).FindStringSubmatch(line); m != nil {
			discovery = append(discovery, m[1])
		}
	}
	var discoveryOnly []string
	for _, p := range discovery {
		if p == "/api" || p == "/apis" || strings.Count(p, "/") <= 3 && !strings.Contains(p, "/namespaces/") {
			discoveryOnly = append(discoveryOnly, p)
		}
	}
	if strings.Join(discoveryOnly, " ") != "/api /apis" {
		t.Errorf("kubectl get pods made %d discovery requests, want /api and /apis only: %v\n%s", len(discoveryOnly), discoveryOnly, out)
	}
	t.Logf("requests: %v", discovery)
	if len(discovery) == 0 {
		t.Errorf("no requests recognised in kubectl -v 6 output:\n%s", out)
	}
}
