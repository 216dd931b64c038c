package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
)

// topResolution is the API server's --metric-resolution in TestKubectlTop.
const topResolution = 2 * time.Second

// TestKubectlTop: the real kubectl top pods shows a pod burning CPU within
// a scrape interval of it running (the first rate needs two scrapes: at
// most two resolutions after the container starts), per container with
// --containers and by label; kubectl top nodes answers; the metrics
// clientset (what the HPA controller reads with) gets the same objects in
// protobuf.
func TestKubectlTop(t *testing.T) {
	c := startClusterOpts(t, clusterOptions{apiserver: func(o *server.Options) { o.MetricResolution = topResolution }})
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "burn", Labels: map[string]string{"app": "burn"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{
				{Name: "burn", Image: "busybox", Command: []string{"sh", "-c", "while :; do :; done"}},
				{Name: "idle", Image: "busybox", Command: []string{"sleep", "3600"}},
			},
		},
	}
	if _, err := c.client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Gone before the kubelet stops, so that it tears the pod down.
		_ = c.client.CoreV1().Pods("default").Delete(ctx, "burn", metav1.DeleteOptions{})
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := c.client.CoreV1().Pods("default").Get(ctx, "burn", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, "burn", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	}); err != nil {
		t.Fatalf("pod burn did not run: %v", err)
	}
	running := time.Now()

	// NAME   CPU(cores)   MEMORY(bytes)
	var line string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*topResolution+10*time.Second, true, func(context.Context) (bool, error) {
		out, err := c.kubectlErr("top", "pods", "-n", "default")
		if err != nil {
			line = out
			return false, nil
		}
		line = rowOf(out, "burn")
		return line != "" && milliCPU(t, strings.Fields(line)[1]) >= 100, nil
	})
	if err != nil {
		t.Fatalf("kubectl top pods never showed burn burning CPU: %v; last: %s", err, line)
	}
	t.Logf("kubectl top pods showed %q %s after the pod ran (resolution %s)", line, time.Since(running).Round(100*time.Millisecond), topResolution)

	out := c.kubectl(t, "top", "pods", "burn", "--containers", "-n", "default")
	// POD   NAME   CPU(cores)   MEMORY(bytes)
	var burnCPU, idleCPU int64 = -1, -1
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "burn" {
			switch f[1] {
			case "burn":
				burnCPU = milliCPU(t, f[2])
			case "idle":
				idleCPU = milliCPU(t, f[2])
			}
		}
	}
	if burnCPU < 100 || idleCPU < 0 || idleCPU >= burnCPU/4 {
		t.Errorf("kubectl top pods --containers:\n%s\nwant burn burning and idle idle", out)
	}
	if out := c.kubectl(t, "top", "pods", "-l", "app=burn", "-A"); rowOf(out, "default") == "" {
		t.Errorf("kubectl top pods -l app=burn -A:\n%s", out)
	}
	if out, err := c.kubectlErr("top", "pods", "-l", "app=nothing", "-n", "default"); !strings.Contains(out, "No resources found") {
		t.Errorf("kubectl top pods -l app=nothing: %v\n%s", err, out)
	}

	// NAME   CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)
	out = c.kubectl(t, "top", "nodes")
	row := strings.Fields(rowOf(out, nodeName))
	if len(row) != 5 || milliCPU(t, row[1]) <= 0 || !strings.HasSuffix(row[3], "Mi") {
		t.Errorf("kubectl top nodes:\n%s", out)
	}

	cfg := *c.ts.AdminConfig
	cfg.ContentType = runtime.ContentTypeProtobuf
	mc, err := metricsclient.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := mc.MetricsV1beta1().PodMetricses("default").Get(ctx, "burn", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the metrics clientset: %v", err)
	}
	if len(pm.Containers) != 2 || pm.Window.Duration < topResolution/2 || pm.Labels["app"] != "burn" {
		t.Errorf("PodMetrics = %+v", pm)
	}
	nm, err := mc.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil || len(nm.Items) != 1 || nm.Items[0].Name != nodeName {
		t.Errorf("NodeMetricsList = %+v, %v", nm, err)
	}
	if _, err := mc.MetricsV1beta1().PodMetricses("default").Get(ctx, "nothing", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), `podmetrics.metrics.k8s.io "default/nothing" not found`) {
		t.Errorf("a pod that does not exist: %v, want metrics-server's NotFound", err)
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

// milliCPU reads kubectl top's CPU column ("998m", "1", "0m").
func milliCPU(t *testing.T, s string) int64 {
	t.Helper()
	if m, ok := strings.CutSuffix(s, "m"); ok {
		v, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			t.Fatalf("CPU column %q: %v", s, err)
		}
		return v
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("CPU column %q: %v", s, err)
	}
	return int64(v * 1000)
}
