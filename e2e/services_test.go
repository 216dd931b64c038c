package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/kubelet/test/harness"
)

// webRS is the seed's ReplicaSet: each pod serves its own name over HTTP
// on port 80 (named "http") and echoes lines on port 9000, and is ready
// while /tmp/ready exists.
const webRS = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: busybox
        command: ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && touch /tmp/ready && httpd -p 80 -h /www && exec nc -ll -p 9000 -e /bin/cat"]
        ports:
        - {name: http, containerPort: 80}
        - {name: echo, containerPort: 9000}
        readinessProbe:
          exec: {command: ["cat", "/tmp/ready"]}
          periodSeconds: 1
          failureThreshold: 1
`

// A NodePort Service whose targetPort is the container port's name.
const webNodePort = `apiVersion: v1
kind: Service
metadata:
  name: web-np
spec:
  type: NodePort
  selector: {app: web}
  ports:
  - {name: http, port: 8080, targetPort: http}
`

// get fetches url (http://host:port/path) from this namespace, the node.
func get(url string) (string, error) {
	host, path, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	conn, err := net.DialTimeout("tcp", host, 2*time.Second)
	if err != nil {
		return "", err
	}
	return httpGetOn(conn, host, path)
}

// httpGetOn sends one HTTP/1.0 GET on conn, closes it, and returns the
// body of a 200 answer.
func httpGetOn(conn net.Conn, host string, path ...string) (string, error) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	fmt.Fprintf(conn, "GET /%s HTTP/1.0\r\nHost: %s\r\n\r\n", strings.Join(path, ""), host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %s", resp.Status)
	}
	return strings.TrimSpace(string(body)), nil
}

// fromPod fetches url from inside pod with busybox wget, through the real
// kubectl exec, giving up after 3 s. A failure of the exec itself fails
// the test: only the command's own failures are returned.
func (c *cluster) fromPod(t *testing.T, pod, url string) (string, error) {
	t.Helper()
	// busybox's sh runs its applets itself; the image links only a few.
	out, err := c.kubectlErr("exec", pod, "--", "sh", "-c", "timeout 3 wget -q -O - "+url)
	out = strings.TrimSpace(out)
	if err != nil && !strings.Contains(out, "command terminated with exit code") {
		t.Fatalf("kubectl exec %s: %v: %s", pod, err, out)
	}
	if err != nil {
		return "", fmt.Errorf("%s", out)
	}
	return out, nil
}

// answers asks url n times and returns who answered, counted.
func answers(t *testing.T, n int, ask func() (string, error)) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		body, err := ask()
		if err != nil {
			seen["error: "+err.Error()]++
			continue
		}
		seen[body]++
	}
	return seen
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *cluster) readyPods(t *testing.T, want int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	harness.Poll(t, 3*time.Minute, fmt.Sprintf("%d ready web pods", want), func() (bool, string) {
		l, err := c.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		pods = pods[:0]
		var states []string
		for _, p := range l.Items {
			states = append(states, fmt.Sprintf("%s %s ready=%v", p.Name, p.Status.Phase, podReady(&p)))
			if p.DeletionTimestamp == nil && podReady(&p) {
				pods = append(pods, p)
			}
		}
		return len(pods) == want && len(l.Items) == want, strings.Join(states, "; ")
	})
	return pods
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (c *cluster) clusterIP(t *testing.T, name string) string {
	t.Helper()
	svc, err := c.client.CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

// refused reports whether a connection to addr is refused at once (the
// proxy's REJECT), rather than answered or left to time out.
func refused(addr string) (bool, string) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		conn.Close()
		return false, "connected"
	}
	return errors.Is(err, syscall.ECONNREFUSED), err.Error()
}

// TestServices is issue 21's walk-through on one node with real pods on
// containerd: traffic safety before any rule, then kubectl expose, the
// ClusterIP and the NodePort from the node and from a pod, the spread
// across pods, readiness, scaling to zero and back, a proxy restart under
// an open connection, and the proxy's cleanup.
func TestServices(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	manifest := filepath.Join(c.dir, "web.yaml")
	writeFile(t, manifest, webRS+"---\n"+webNodePort)
	c.kubectl(t, "apply", "-f", manifest)
	c.kubectl(t, "expose", "rs", "web", "--port", "80", "--target-port", "80")
	c.kubectl(t, "expose", "rs", "web", "--name", "echo", "--port", "9000", "--target-port", "echo")
	pods := c.readyPods(t, 2)
	webIP := c.clusterIP(t, "web")

	t.Run("no packet for a ClusterIP leaves the machine", func(t *testing.T) {
		// The detector works: with nothing in place, a pod's packet for
		// the ClusterIP goes out of the default route and is counted
		// outside.
		before := c.outsidePackets(t, "service-packets-outside")
		if _, err := c.fromPod(t, pods[0].Name, "http://"+webIP+":80/"); err == nil {
			t.Fatalf("the ClusterIP answered with no proxy running")
		}
		if got := c.outsidePackets(t, "service-packets-outside"); got <= before {
			t.Fatalf("the outside namespace counted %d packets for the service range before any route, want more than %d: the check below could not fail", got, before)
		}
		// The proxy's route for the service range, and still no rule:
		// the connection fails and nothing more arrives outside.
		installServiceRoute(t)
		before = c.outsidePackets(t, "service-packets-outside")
		if _, err := c.fromPod(t, pods[0].Name, "http://"+webIP+":80/"); err == nil {
			t.Fatalf("the ClusterIP answered with no proxy rules")
		}
		if _, err := get("http://" + webIP + ":80/"); err == nil {
			t.Fatalf("the ClusterIP answered the node with no proxy rules")
		}
		if got := c.outsidePackets(t, "service-packets-outside"); got != before {
			t.Fatalf("%d packets for the service range left the node with the service route in place", got-before)
		}
	})

	// The proxy outlives each subtest: it is started, and restarted, on
	// the whole test.
	top := t
	stopProxy := c.startProxy(top, nil)

	t.Run("ClusterIP from the node and from a pod, spread across both pods", func(t *testing.T) {
		want := []string{pods[0].Name, pods[1].Name}
		sort.Strings(want)
		harness.Poll(t, 30*time.Second, "both pods answering the ClusterIP from the node", func() (bool, string) {
			seen := answers(t, 20, func() (string, error) { return get("http://" + webIP + ":80/") })
			return strings.Join(keys(seen), ",") == strings.Join(want, ","), fmt.Sprint(seen)
		})
		for _, from := range pods {
			// A pod through the Service, itself among the answers
			// (hairpin) as well as the other pod.
			harness.Poll(t, 30*time.Second, "both pods answering the ClusterIP from "+from.Name, func() (bool, string) {
				seen := answers(t, 12, func() (string, error) { return c.fromPod(t, from.Name, "http://"+webIP+":80/") })
				return strings.Join(keys(seen), ",") == strings.Join(want, ","), fmt.Sprint(seen)
			})
		}
	})

	t.Run("NodePort with a named targetPort, from the node, loopback, a pod and outside", func(t *testing.T) {
		svc, err := c.client.CoreV1().Services("default").Get(ctx, "web-np", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		port := fmt.Sprint(svc.Spec.Ports[0].NodePort)
		names := map[string]bool{pods[0].Name: true, pods[1].Name: true}
		for _, url := range []string{"http://" + nodeIP + ":" + port + "/", "http://127.0.0.1:" + port + "/", "http://" + svc.Spec.ClusterIP + ":8080/"} {
			harness.Poll(t, 30*time.Second, url+" from the node", func() (bool, string) {
				body, err := get(url)
				if err != nil {
					return false, err.Error()
				}
				return names[body], body
			})
		}
		harness.Poll(t, 30*time.Second, "the NodePort from a pod", func() (bool, string) {
			body, err := c.fromPod(t, pods[0].Name, "http://"+nodeIP+":"+port+"/")
			return err == nil && names[body], body
		})
		harness.Poll(t, 30*time.Second, "the NodePort from outside the node", func() (bool, string) {
			body, err := c.getFromOutside(t, nodeIP+":"+port)
			if err != nil {
				return false, err.Error()
			}
			return names[body], body
		})
	})

	t.Run("a pod that stops being ready leaves the rotation", func(t *testing.T) {
		leaving, staying := pods[0].Name, pods[1].Name
		c.kubectl(t, "exec", leaving, "--", "sh", "-c", "rm /tmp/ready")
		harness.Poll(t, 30*time.Second, leaving+" not ready", func() (bool, string) {
			p, err := c.client.CoreV1().Pods("default").Get(ctx, leaving, metav1.GetOptions{})
			return err == nil && !podReady(p), fmt.Sprint(err)
		})
		notReady := time.Now()
		harness.Poll(t, 30*time.Second, "only "+staying+" answering", func() (bool, string) {
			seen := answers(t, 20, func() (string, error) { return get("http://" + webIP + ":80/") })
			return len(seen) == 1 && seen[staying] == 20, fmt.Sprint(seen)
		})
		t.Logf("%s left the rotation %v after its Ready condition turned False (20 answers in a row from %s)", leaving, time.Since(notReady).Round(time.Millisecond), staying)
		c.kubectl(t, "exec", leaving, "--", "sh", "-c", "touch /tmp/ready")
		c.readyPods(t, 2)
	})

	t.Run("a proxy restart drops no established connection", func(t *testing.T) {
		echoIP := c.clusterIP(t, "echo")
		var conn net.Conn
		harness.Poll(t, 30*time.Second, "a connection to the echo Service", func() (bool, string) {
			var err error
			conn, err = net.DialTimeout("tcp", echoIP+":9000", 2*time.Second)
			return err == nil, fmt.Sprint(err)
		})
		defer conn.Close()
		r := bufio.NewReader(conn)
		echo := func(line string) {
			t.Helper()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := fmt.Fprintln(conn, line); err != nil {
				t.Fatalf("writing %q: %v", line, err)
			}
			got, err := r.ReadString('\n')
			if err != nil || strings.TrimSpace(got) != line {
				t.Fatalf("echo of %q: %q, %v", line, got, err)
			}
		}
		echo("before the restart")
		stopProxy()
		echo("while no proxy runs")
		stopProxy = c.startProxy(top, nil)
		c.waitProxyHealthy(t)
		echo("after the restart")
	})

	t.Run("scaled to zero the Service refuses at once, and answers again when scaled back", func(t *testing.T) {
		c.kubectl(t, "scale", "rs", "web", "--replicas", "0")
		harness.Poll(t, time.Minute, "the ClusterIP refusing", func() (bool, string) {
			return refused(webIP + ":80")
		})
		c.kubectl(t, "scale", "rs", "web", "--replicas", "2")
		pods = c.readyPods(t, 2)
		harness.Poll(t, 30*time.Second, "the ClusterIP answering again", func() (bool, string) {
			body, err := get("http://" + webIP + ":80/")
			return err == nil && (body == pods[0].Name || body == pods[1].Name), fmt.Sprint(body, err)
		})
	})

	t.Run("pod egress is guarded, and masqueraded where allowed", func(t *testing.T) {
		addr, seen := c.listenOutside(t)
		before := c.outsidePackets(t, "pod-packets-outside")
		if out, err := c.fromPod(t, pods[0].Name, "http://"+addr+"/"); err == nil {
			t.Fatalf("a pod reached %s outside the node past the egress guard: %s", addr, out)
		}
		select {
		case from := <-seen:
			t.Fatalf("the outside saw a connection from %s past the egress guard", from)
		default:
		}
		// Allowed out by the uplink (a real deployment's setting), the
		// pod's connection leaves with the node's address.
		stopProxy()
		stopProxy = c.startProxy(top, []string{bridge, uplink})
		harness.Poll(t, 30*time.Second, "a pod reaching outside through the allowed uplink", func() (bool, string) {
			_, err := c.fromPod(t, pods[0].Name, "http://"+addr+"/")
			select {
			case from := <-seen:
				return from == nodeIP, "seen from " + from
			default:
				return false, fmt.Sprint(err)
			}
		})
		if got := c.outsidePackets(t, "pod-packets-outside"); got != before {
			t.Errorf("%d packets left the node with a pod's source address", got-before)
		}
	})

	t.Run("cleanup leaves nothing of the proxy's", func(t *testing.T) {
		stopProxy()
		c.cleanupProxy(t)
		if out := run(t, "iptables-save"); strings.Contains(out, "SKIFF-") {
			t.Errorf("iptables-save after --cleanup still has skiff's chains:\n%s", out)
		}
		if out := run(t, "ip", "route", "show", serviceCIDR); strings.TrimSpace(out) != "" {
			t.Errorf("the service route is still there after --cleanup: %s", out)
		}
	})
}
