package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/component-base/certs"
	"skiff.dev/scheduler/app"
)

const timeout = 30 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client *kubernetes.Clientset
	sched  *app.Config
}

// start brings up an API server and a scheduler with its own identity;
// opts adjust the scheduler's options.
func start(t *testing.T, opts ...func(o *app.Options, kubeconfig string)) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	e := &env{t: t, ctx: context.Background(), client: ts.Client}
	e.serviceAccount()
	e.sched, _ = startScheduler(t, ts, opts...)
	return e
}

// serviceAccount creates the default namespace's ServiceAccount, which
// service account admission may require of pods, unless it exists.
func (e *env) serviceAccount() {
	e.t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}}
	if _, err := e.client.CoreV1().ServiceAccounts("default").Create(e.ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatalf("creating the default ServiceAccount: %v", err)
	}
}

// startScheduler starts one scheduler replica; stop cancels it and waits.
func startScheduler(t *testing.T, ts *testserver.TestServer, opts ...func(o *app.Options, kubeconfig string)) (*app.Config, func()) {
	t.Helper()
	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueClientCert(ca, "system:kube-scheduler", nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "scheduler.kubeconfig")
	if err := certs.WriteKubeconfig(kubeconfig, ts.URL, ca, "system:kube-scheduler", kp); err != nil {
		t.Fatal(err)
	}
	o := app.NewOptions()
	o.Client.Kubeconfig = kubeconfig
	o.Serving.BindAddress = "127.0.0.1"
	o.Serving.Port = 0
	le := o.LeaderElection
	le.LeaseDuration, le.RenewDeadline, le.RetryPeriod = 4*time.Second, 3*time.Second, 500*time.Millisecond
	for _, opt := range opts {
		opt(o, kubeconfig)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := app.Setup(ctx, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("scheduler: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return cfg, stop
}

func (e *env) node(name string, cpu, mem string, pods int64, labels map[string]string, taints ...corev1.Taint) {
	e.t.Helper()
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
	}
	created, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating node %s: %v", name, err)
	}
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	created.Status.Capacity, created.Status.Allocatable = rl, rl
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	if _, err := e.client.CoreV1().Nodes().UpdateStatus(e.ctx, created, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("setting node %s status: %v", name, err)
	}
}

type podOpt func(*corev1.Pod)

func (e *env) pod(name, cpu string, opts ...podOpt) *corev1.Pod {
	e.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	for _, o := range opts {
		o(p)
	}
	created, err := e.client.CoreV1().Pods("default").Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating pod %s: %v", name, err)
	}
	return created
}

// waitPod polls until cond holds for the pod.
func (e *env) waitPod(name string, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	e.t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := e.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		e.t.Fatalf("pod %s: waiting for %s: %v (last: nodeName=%q conditions=%+v)", name, what, err, last.Spec.NodeName, last.Status.Conditions)
	}
	return last
}

func (e *env) waitBound(name string) string {
	e.t.Helper()
	p := e.waitPod(name, "binding", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	return p.Spec.NodeName
}

func podScheduled(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// waitUnschedulable waits for PodScheduled=False/Unschedulable with msg
// and a FailedScheduling event with the same message.
func (e *env) waitUnschedulable(name, msg string) {
	e.t.Helper()
	e.waitUnschedulableBy(name, msg, "default-scheduler")
}

// waitUnschedulableBy is waitUnschedulable for the profile named source.
func (e *env) waitUnschedulableBy(name, msg, source string) {
	e.t.Helper()
	e.waitPod(name, "PodScheduled=False "+msg, func(p *corev1.Pod) bool {
		c := podScheduled(p)
		return p.Spec.NodeName == "" && c != nil && c.Status == corev1.ConditionFalse &&
			c.Reason == corev1.PodReasonUnschedulable && c.Message == msg
	})
	var events []corev1.Event
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		events = l.Items
		for _, ev := range l.Items {
			if ev.InvolvedObject.Kind == "Pod" && ev.InvolvedObject.Name == name && ev.Reason == "FailedScheduling" &&
				ev.Type == corev1.EventTypeWarning && ev.Message == msg && ev.Source.Component == source {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("no FailedScheduling event %q for pod %s: %v (events: %+v)", msg, name, err, eventSummary(events))
	}
}

func eventSummary(evs []corev1.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, fmt.Sprintf("%s %s %s: %s", ev.InvolvedObject.Name, ev.Type, ev.Reason, ev.Message))
	}
	return out
}

func TestSpreadByResources(t *testing.T) {
	t.Parallel()
	e := start(t)
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		e.node(n, "2", "4Gi", 110, nil)
	}
	for i := 0; i < 6; i++ {
		e.pod(fmt.Sprintf("web-%d", i), "500m")
	}
	perNode := map[string]int{}
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("web-%d", i)
		perNode[e.waitBound(name)]++
		e.waitPod(name, "PodScheduled=True", func(p *corev1.Pod) bool {
			c := podScheduled(p)
			return c != nil && c.Status == corev1.ConditionTrue
		})
	}
	want := map[string]int{"node-a": 2, "node-b": 2, "node-c": 2}
	for n, c := range want {
		if perNode[n] != c {
			t.Fatalf("pods per node = %v, want %v", perNode, want)
		}
	}
	// A Scheduled event for each pod, from the scheduler.
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("reason", "Scheduled").String(),
		})
		if err != nil {
			return false, nil
		}
		seen := map[string]bool{}
		for _, ev := range l.Items {
			if ev.Reason == "Scheduled" && strings.HasPrefix(ev.Message, "Successfully assigned default/"+ev.InvolvedObject.Name+" to ") {
				seen[ev.InvolvedObject.Name] = true
			}
		}
		return len(seen) == 6, nil
	})
	if err != nil {
		t.Fatalf("Scheduled events: %v", err)
	}
}

func TestUnschedulableThenFitsAfterDelete(t *testing.T) {
	t.Parallel()
	e := start(t)
	gpu := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	e.node("node-a", "1", "2Gi", 110, nil)
	e.node("node-b", "4", "8Gi", 110, nil, gpu)
	e.node("node-c", "4", "8Gi", 110, nil, gpu)

	// Exactly full: requests equal to the allocatable still fit.
	e.pod("first", "1")
	if n := e.waitBound("first"); n != "node-a" {
		t.Fatalf("first went to %s, want node-a", n)
	}
	e.pod("second", "500m")
	e.waitUnschedulable("second", "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}. "+
		"preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..")

	// Deleting the pod that fills node-a makes room.
	if err := e.client.CoreV1().Pods("default").Delete(e.ctx, "first", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if n := e.waitBound("second"); n != "node-a" {
		t.Fatalf("second went to %s, want node-a", n)
	}
	e.waitPod("second", "PodScheduled=True", func(p *corev1.Pod) bool {
		c := podScheduled(p)
		return c != nil && c.Status == corev1.ConditionTrue
	})
}

func TestTooManyPods(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.node("small", "8", "8Gi", 2, nil)
	e.pod("p0", "")
	e.pod("p1", "")
	e.waitBound("p0")
	e.waitBound("p1")
	e.pod("p2", "")
	e.waitUnschedulable("p2", "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..")

	// A node change retries the pod; the repeated failure is counted on
	// the same event, as upstream's recorder aggregates it.
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "small", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{"touched": "yes"}
	if _, err := e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, ev := range l.Items {
			if ev.InvolvedObject.Name == "p2" && ev.Reason == "FailedScheduling" && ev.Count >= 2 {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the second FailedScheduling was not counted: %v", err)
	}
}

func TestTaintsTolerationsAndSelectors(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.node("ssd", "4", "8Gi", 110, map[string]string{"disk": "ssd"})
	e.node("tainted", "4", "8Gi", 110, nil, corev1.Taint{Key: "key", Value: "value", Effect: corev1.TaintEffectNoSchedule})
	e.node("plain", "4", "8Gi", 110, nil)

	e.pod("wants-ssd", "100m", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} })
	e.pod("tolerates", "100m", func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "key", Operator: corev1.TolerationOpEqual, Value: "value", Effect: corev1.TaintEffectNoSchedule}}
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"tainted"}}}},
			}},
		}}
	})
	e.pod("not-ssd", "100m", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpDoesNotExist}}},
			}},
		}}
	})
	e.pod("nowhere", "100m", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "z1"} })
	e.pod("other-scheduler", "100m", func(p *corev1.Pod) { p.Spec.SchedulerName = "someone-else" })
	e.pod("gated", "100m", func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	})

	if n := e.waitBound("wants-ssd"); n != "ssd" {
		t.Errorf("wants-ssd on %s, want ssd", n)
	}
	if n := e.waitBound("tolerates"); n != "tainted" {
		t.Errorf("tolerates on %s, want tainted", n)
	}
	if n := e.waitBound("not-ssd"); n != "plain" {
		t.Errorf("not-ssd on %s, want plain", n)
	}
	e.waitUnschedulable("nowhere", "0/3 nodes are available: 1 node(s) had untolerated taint {key: value}, 2 node(s) didn't match Pod's node affinity/selector. "+
		"preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..")

	// Labelling a node moves the pod back to the active queue.
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{"zone": "z1"}
	if _, err := e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := e.waitBound("nowhere"); n != "plain" {
		t.Errorf("nowhere on %s, want plain", n)
	}
	// Removing the last gate lets the gated pod in.
	g, err := e.client.CoreV1().Pods("default").Get(e.ctx, "gated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Spec.NodeName != "" {
		t.Fatalf("gated pod was bound to %s", g.Spec.NodeName)
	}
	g.Spec.SchedulingGates = nil
	if _, err := e.client.CoreV1().Pods("default").Update(e.ctx, g, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitBound("gated")
	// The pod for another scheduler is left alone.
	p, err := e.client.CoreV1().Pods("default").Get(e.ctx, "other-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" || podScheduled(p) != nil {
		t.Errorf("pod for another scheduler was touched: nodeName=%q conditions=%v", p.Spec.NodeName, p.Status.Conditions)
	}
}

func TestLeaseHealthAndMetrics(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.node("node-a", "1", "1Gi", 110, nil)
	e.pod("p", "100m")
	e.waitBound("p")

	lease, err := e.client.CoordinationV1().Leases("kube-system").Get(e.ctx, "kube-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Fatalf("lease has no holder: %+v", lease.Spec)
	}

	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path string) string {
		t.Helper()
		resp, err := hc.Get("https://" + e.sched.Addr() + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := get("/healthz"); got != "ok" {
		t.Errorf("/healthz = %q", got)
	}
	if got := get("/readyz"); got != "ok" {
		t.Errorf("/readyz = %q", got)
	}
	var body string
	err = wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		body = get("/metrics")
		return strings.Contains(body, `scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1`), nil
	})
	if err != nil {
		t.Fatalf("metrics: %v\n%s", err, body)
	}
	for _, want := range []string{
		`scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 1`,
		`scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 1`,
		`scheduler_pending_pods{queue="active"} 0`,
		`scheduler_pending_pods{queue="unschedulable"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestLeaderElectionFailover(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, nil)
	e := &env{t: t, ctx: context.Background(), client: ts.Client}
	first, stopFirst := startScheduler(t, ts)
	second, stopSecond := startScheduler(t, ts)
	e.node("node-a", "4", "4Gi", 110, nil)

	var leader, standby *app.Config
	stopLeader := stopFirst
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		switch {
		case first.Leading() && !second.Leading():
			leader, standby = first, second
		case second.Leading() && !first.Leading():
			leader, standby, stopLeader = second, first, stopSecond
		}
		return leader != nil, nil
	})
	if err != nil {
		t.Fatalf("no single leader: first=%v second=%v", first.Leading(), second.Leading())
	}
	e.pod("before", "100m")
	e.waitBound("before")

	// The leader stops and releases the Lease; the standby takes over.
	stopLeader()
	err = wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return standby.Leading(), nil
	})
	if err != nil {
		t.Fatalf("standby did not take over: %v", err)
	}
	e.pod("after", "100m")
	e.waitBound("after")
}
