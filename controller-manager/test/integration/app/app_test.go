package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const timeout = 60 * time.Second

// startCM starts one controller-manager replica (cmtest.Start).
func startCM(t *testing.T, ts *testserver.TestServer, edit func(*cmapp.Options)) (*cmapp.Config, func()) {
	t.Helper()
	return cmtest.Start(t, ts, edit)
}

func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func replicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
}

// podsOf lists the pods whose controller is the named ReplicaSet.
func podsOf(ctx context.Context, c kubernetes.Interface, ns, rs string) ([]corev1.Pod, error) {
	l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + rs})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "ReplicaSet" && ref.Name == rs && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

func waitPods(t *testing.T, c kubernetes.Interface, ns, rs string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	poll(t, fmt.Sprintf("%d pods of %s", n, rs), func(ctx context.Context) (bool, error) {
		var err error
		pods, err = podsOf(ctx, c, ns, rs)
		return err == nil && len(pods) == n, err
	})
	return pods
}

// The seed 003 path under the controller manager's own identity: the
// ReplicaSet makes its pods (named from generateName, owned by it), a
// deleted pod comes back, and a new namespace gets its default
// ServiceAccount and kube-root-ca.crt.
func TestReplicaSetUnderOwnIdentity(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	startCM(t, ts, nil)
	c, ctx := ts.Client, context.Background()

	if _, err := c.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("nginx", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitPods(t, c, "default", "nginx", 2)
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		if p.GenerateName != "nginx-" || !strings.HasPrefix(p.Name, "nginx-") || ref.APIVersion != "apps/v1" ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s: generateName %q, controller %+v", p.Name, p.GenerateName, ref)
		}
	}
	if err := c.CoreV1().Pods("default").Delete(ctx, pods[0].Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	poll(t, "a replacement pod", func(ctx context.Context) (bool, error) {
		now, err := podsOf(ctx, c, "default", "nginx")
		if err != nil || len(now) != 2 {
			return false, err
		}
		return now[0].Name != pods[0].Name && now[1].Name != pods[0].Name, nil
	})
	poll(t, "status.replicas 2", func(ctx context.Context) (bool, error) {
		rs, err := c.AppsV1().ReplicaSets("default").Get(ctx, "nginx", metav1.GetOptions{})
		return err == nil && rs.Status.Replicas == 2 && rs.Status.ObservedGeneration == rs.Generation, err
	})

	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the default ServiceAccount and kube-root-ca.crt in team-a", func(ctx context.Context) (bool, error) {
		_, err1 := c.CoreV1().ServiceAccounts("team-a").Get(ctx, "default", metav1.GetOptions{})
		cm, err2 := c.CoreV1().ConfigMaps("team-a").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err1 == nil && err2 == nil && strings.Contains(cm.Data["ca.crt"], "BEGIN CERTIFICATE"), nil
	})

	// Cascading delete through the garbage collector and the namespace
	// controller, both under the controller manager's identity.
	if err := c.CoreV1().Namespaces().Delete(ctx, "team-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.AppsV1().ReplicaSets("default").Delete(ctx, "nginx", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the ReplicaSet's pods and the namespace gone", func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			return false, err
		}
		_, err = c.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{})
		return len(pods.Items) == 0 && err != nil, nil
	})
}

// Two replicas: exactly one leads and acts; when it dies without
// releasing its Lease (as a killed process does), the other takes over
// within the lease duration and acts.
func TestTwoReplicasOneActs(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	crash := func(o *cmapp.Options) { o.LeaderElection.KeepLeaseOnExit = true }
	first, stopFirst := startCM(t, ts, crash)
	second, stopSecond := startCM(t, ts, crash)
	c, ctx := ts.Client, context.Background()

	var standby *cmapp.Config
	var stopLeader func()
	poll(t, "one leader", func(context.Context) (bool, error) {
		switch {
		case first.Leading() && !second.Leading():
			standby, stopLeader = second, stopFirst
		case second.Leading() && !first.Leading():
			standby, stopLeader = first, stopSecond
		}
		return standby != nil, nil
	})
	if _, err := c.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, c, "default", "web", 3)
	// Had both acted, more than three pods would have been created: every
	// pod ever created is still there (nothing deleted any), so the list
	// of all the ReplicaSet's pods, terminating ones included, is three.
	all, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(all.Items) != 3 {
		t.Fatalf("pods of web: %d (%v), want exactly 3", len(all.Items), err)
	}
	if standby.Leading() {
		t.Fatal("both replicas lead")
	}

	start := time.Now()
	stopLeader()
	poll(t, "the standby to lead", func(context.Context) (bool, error) { return standby.Leading(), nil })
	// The standby waits out the lease duration (4 s here) from the last
	// renewal, then takes the Lease at its next retry (0.5 s).
	took := time.Since(start)
	t.Logf("hand-over after %v", took)
	if took > 4*time.Second+2*time.Second {
		t.Errorf("hand-over took %v, more than the lease duration and a retry", took)
	}
	rs, err := c.AppsV1().ReplicaSets("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs.Spec.Replicas = ptr.To(int32(5))
	if _, err := c.AppsV1().ReplicaSets("default").Update(ctx, rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, c, "default", "web", 5)
}

// Health is open; /metrics asks for a client certificate that the API
// server authorizes, and then shows the work queues and controller syncs.
func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	cm, _ := startCM(t, ts, func(o *cmapp.Options) { o.LeaderElection.LeaderElect = false })
	c, ctx := ts.Client, context.Background()
	if _, err := c.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("m", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, c, "default", "m", 1)

	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	client := func(cn string, orgs ...string) *http.Client {
		kp, err := certs.IssueClientCert(ca, cn, orgs)
		if err != nil {
			t.Fatal(err)
		}
		cert := tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key}
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // the serving certificate is self-signed here
			Certificates:       []tls.Certificate{cert},
		}}}
	}
	get := func(hc *http.Client, path string) (int, string) {
		t.Helper()
		resp, err := hc.Get("https://" + cm.Addr() + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	anonymous := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(anonymous, p); code != 200 || body != "ok" {
			t.Errorf("%s = %d %q", p, code, body)
		}
	}
	if code, _ := get(anonymous, "/metrics"); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a certificate = %d, want 401", code)
	}
	if code, body := get(client("mallory"), "/metrics"); code != http.StatusForbidden || !strings.Contains(body, `user "mallory" cannot get path "/metrics"`) {
		t.Errorf("/metrics as mallory = %d %q, want 403", code, body)
	}
	admin := client("admin", "system:masters")
	var body string
	poll(t, "sync metrics", func(context.Context) (bool, error) {
		var code int
		code, body = get(admin, "/metrics")
		return code == 200 && strings.Contains(body, `controller_sync_total{controller="replicaset-controller",result="success"}`), nil
	})
	for _, want := range []string{
		`workqueue_adds_total{name="replicaset"}`,
		`workqueue_depth{name="deployment"}`,
		`controller_sync_duration_seconds_count{controller="replicaset-controller"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
