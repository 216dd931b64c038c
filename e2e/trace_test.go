package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ctlapp "skiff.dev/ctl/app"
	"skiff.dev/ctl/pkg/trace"
	kubeletapp "skiff.dev/kubelet/app"
	"skiff.dev/kubelet/test/harness"
)

// skiffctl runs skiffctl in-process as the cluster's admin.
func (c *cluster) skiffctl(t *testing.T, args ...string) string {
	t.Helper()
	cmd := ctlapp.NewSkiffctlCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"--kubeconfig", c.kubeconfig}, args...))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("skiffctl %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

const traceService = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
`

// TestTraceAndWhy: the trace of a real pod of the seed's ReplicaSet has every
// step of the path in causal order, up to the rules written by the node's
// proxy, with durations that add up to the whole and, from the events'
// eventTime, steps timed to the microsecond; skiffctl why names the actual
// cause for a pod that cannot be scheduled, one whose image does not exist
// and one that crashes.
func TestTraceAndWhy(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	// The node's proxy, synced once before the Service exists, records
	// the rules it writes for the pod's endpoint.
	stopProxy := c.startProxy(t, nil)
	t.Cleanup(func() {
		stopProxy()
		c.cleanupProxy(t)
	})
	c.waitProxyHealthy(t)
	writeFile(t, c.dir+"/web.yaml", strings.Replace(webRS, "replicas: 2", "replicas: 1", 1)+"---\n"+traceService)
	if os.Getenv("SKIFF_PATH_DOC") != "" {
		// docs/path.md's material: every request of kubectl apply.
		t.Logf("kubectl apply -v=10:\n%s", c.kubectl(t, "apply", "-v=10", "-f", c.dir+"/web.yaml"))
	} else {
		c.kubectl(t, "apply", "-f", c.dir+"/web.yaml")
	}
	// Three pods that do not run, each for its own reason.
	writeFile(t, c.dir+"/broken.yaml", `apiVersion: v1
kind: Pod
metadata: {name: nowhere}
spec:
  nodeSelector: {disk: ssd}
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: noimage}
spec:
  containers: [{name: c, image: "busybox-does-not-exist:1.0"}]
---
apiVersion: v1
kind: Pod
metadata: {name: crasher}
spec:
  containers: [{name: c, image: busybox, command: ["sh", "-c", "echo bye; exit 3"]}]
`)
	c.kubectl(t, "apply", "-f", c.dir+"/broken.yaml")

	pod := c.readyPods(t, 1)[0]
	// Wait for the last step: the proxy's rules for the pod's endpoint.
	var tr trace.Trace
	harness.Poll(t, time.Minute, "a complete trace of "+pod.Name, func() (bool, string) {
		out := c.skiffctl(t, "trace", "pod/"+pod.Name, "-o", "json")
		tr = trace.Trace{}
		if err := json.Unmarshal([]byte(out), &tr); err != nil {
			t.Fatalf("skiffctl trace -o json: %v: %s", err, out)
		}
		n := len(tr.Steps)
		return n > 0 && tr.Steps[n-1].Name == "rules written on "+nodeName, out
	})
	want := []string{"replicaset stored", "pod stored", "created by controller", "scheduled", "seen by kubelet",
		"sandbox and network ready", "container web created", "container web started", "containers ready", "ready",
		"in service web endpoints", "rules written on " + nodeName}
	var names []string
	for _, s := range tr.Steps {
		if !strings.HasPrefix(s.Name, "image ") {
			names = append(names, s.Name)
		}
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("steps (images aside):\n got %q\nwant %q", names, want)
	}
	var sum time.Duration
	slowest := 0
	for i, s := range tr.Steps {
		sum += s.Duration
		if i > 0 && s.At.Before(tr.Steps[i-1].At) {
			t.Errorf("step %q at %s before its predecessor", s.Name, s.At)
		}
		if s.Duration > tr.Total {
			t.Errorf("step %q takes %s, more than the whole %s", s.Name, s.Duration, tr.Total)
		}
		if s.Slowest {
			slowest++
		}
	}
	if sum != tr.Total {
		t.Errorf("the durations add to %s, the whole is %s", sum, tr.Total)
	}
	// The events carry eventTime: steps between two of them are timed to
	// the microsecond, and at least one takes a fraction of a second.
	var fine []string
	for i, s := range tr.Steps {
		if i > 0 && s.Precision == trace.Microsecond && tr.Steps[i-1].Precision == trace.Microsecond &&
			s.Duration > 0 && s.Duration%time.Second != 0 {
			fine = append(fine, fmt.Sprintf("%s %s", s.Name, s.Duration))
		}
	}
	if len(fine) == 0 {
		t.Errorf("no step timed to a fraction of a second between two microsecond records: %+v", tr.Steps)
	}
	if s := tr.Steps[len(tr.Steps)-1]; s.Component != "kube-proxy" || s.Precision != trace.Microsecond {
		t.Errorf("the proxy's step: %+v", s)
	}
	if tr.Total > 0 && slowest != 1 {
		t.Errorf("%d steps marked slowest", slowest)
	}
	if len(tr.Missing) != 0 {
		t.Errorf("missing steps: %q", tr.Missing)
	}
	if tr.Node != nodeName || !strings.Contains(tr.Steps[3].Detail, "to "+nodeName+" after 1 attempt") {
		t.Errorf("scheduled step %+v, node %q", tr.Steps[3], tr.Node)
	}
	// kubectl shows the events as before: their firstTimestamp is still
	// set, eventTime only adds the microseconds.
	for _, sel := range []string{"reason=RulesWritten", "reason=Started"} {
		out := c.kubectl(t, "get", "events", "--field-selector", sel)
		if strings.Contains(out, "<unknown>") || !strings.Contains(out, strings.TrimPrefix(sel, "reason=")) {
			t.Errorf("kubectl get events --field-selector %s:\n%s", sel, out)
		}
		t.Logf("kubectl get events --field-selector %s:\n%s", sel, out)
	}
	t.Logf("skiffctl trace rs/web:\n%s", c.skiffctl(t, "trace", "rs/web"))
	if os.Getenv("SKIFF_PATH_DOC") != "" {
		t.Logf("kubectl events:\n%s", c.kubectl(t, "events"))
		t.Logf("skiffctl trace -o json:\n%s", c.skiffctl(t, "trace", "pod/"+pod.Name, "-o", "json"))
		resp, err := c.ts.Server.EtcdClient().Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, kv := range resp.Kvs {
			k := string(kv.Key)
			if strings.Contains(k, "/default/") || strings.HasPrefix(k, "/registry/minions/") {
				keys = append(keys, fmt.Sprintf("%s create_revision=%d mod_revision=%d", k, kv.CreateRevision, kv.ModRevision))
			}
		}
		t.Logf("etcd keys (revision %d):\n%s", resp.Header.Revision, strings.Join(keys, "\n"))
	}

	why := func(name, what string, ok func(string) bool) {
		t.Helper()
		var last string
		harness.Poll(t, 2*time.Minute, "skiffctl why pod/"+name+" names "+what, func() (bool, string) {
			last = c.skiffctl(t, "why", "pod/"+name)
			return ok(last), last
		})
		if strings.Count(strings.TrimSpace(last), "\n") != 0 {
			t.Errorf("why pod/%s is not one paragraph: %q", name, last)
		}
		t.Logf("skiffctl why pod/%s:\n%s", name, last)
	}
	why("nowhere", "the scheduler's reason", func(s string) bool {
		return strings.Contains(s, "is Pending: it is not scheduled to any node") && strings.Contains(s, "0/1 nodes are available") &&
			strings.Contains(s, "node affinity/selector")
	})
	why("noimage", "the failed pull", func(s string) bool {
		return strings.Contains(s, `its image "busybox-does-not-exist:1.0" cannot be pulled`) &&
			strings.Contains(s, `Failed to pull image "busybox-does-not-exist:1.0"`)
	})
	why("crasher", "the last exit", func(s string) bool {
		return strings.Contains(s, "Container c is crash-looping (CrashLoopBackOff") && strings.Contains(s, "it last exited with code 3")
	})
	if out := c.skiffctl(t, "why", "pod/"+pod.Name); !strings.Contains(out, "is Running and Ready on "+nodeName) {
		t.Errorf("why of a running pod: %s", out)
	}
	for _, n := range []string{"nowhere", "noimage", "crasher"} {
		_ = c.client.CoreV1().Pods("default").Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}
	_ = c.client.AppsV1().ReplicaSets("default").Delete(ctx, "web", metav1.DeleteOptions{})
	harness.Poll(t, time.Minute, "the test's pods gone", func() (bool, string) {
		l, err := c.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range l.Items {
			left = append(left, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
		}
		return len(l.Items) == 0, strings.Join(left, "; ")
	})
}

// TestTraceCost (skipped unless SKIFF_TRACE_BENCH is set) measures the pod
// start of the seed's ReplicaSet of 50 pods with the kubelet's extra trace
// records (--trace-pod-start, the default) and without them: from each pod
// first seen by the test's watch to it seen Ready. Each runs on a cluster of
// its own, with, then without (SKIFF_TRACE_BENCH=off-first: the other way
// round).
func TestTraceCost(t *testing.T) {
	if os.Getenv("SKIFF_TRACE_BENCH") == "" {
		t.Skip("set SKIFF_TRACE_BENCH=1 to measure the cost of the trace records")
	}
	order := []bool{true, false}
	if os.Getenv("SKIFF_TRACE_BENCH") == "off-first" {
		order = []bool{false, true}
	}
	for _, on := range order {
		t.Run(fmt.Sprintf("trace-pod-start=%v", on), func(t *testing.T) {
			c := startClusterWith(t, func(o *kubeletapp.Options) { o.TracePodStart = on })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			w, err := c.client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			writeFile(t, c.dir+"/web.yaml", strings.Replace(webRS, "replicas: 2", "replicas: 50", 1))
			c.kubectl(t, "apply", "-f", c.dir+"/web.yaml")
			seen, ready := map[string]time.Time{}, map[string]time.Duration{}
			for len(ready) < 50 {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatalf("watch closed with %d of 50 pods ready", len(ready))
					}
					p, isPod := ev.Object.(*corev1.Pod)
					if !isPod {
						continue
					}
					now := time.Now()
					if _, ok := seen[p.Name]; !ok {
						seen[p.Name] = now
					}
					if _, done := ready[p.Name]; !done && podReady(p) {
						ready[p.Name] = now.Sub(seen[p.Name])
					}
				case <-ctx.Done():
					t.Fatalf("%d of 50 pods ready", len(ready))
				}
			}
			var d []time.Duration
			for _, v := range ready {
				d = append(d, v)
			}
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			t.Logf("RESULT trace-pod-start=%v pods=50 p50=%s p99=%s max=%s", on, d[24].Round(time.Millisecond), d[48].Round(time.Millisecond), d[49].Round(time.Millisecond))
			_ = c.client.AppsV1().ReplicaSets("default").Delete(context.Background(), "web", metav1.DeleteOptions{})
			harness.Poll(t, 3*time.Minute, "the 50 pods gone", func() (bool, string) {
				l, err := c.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return false, err.Error()
				}
				return len(l.Items) == 0, fmt.Sprintf("%d pods left", len(l.Items))
			})
		})
	}
}
