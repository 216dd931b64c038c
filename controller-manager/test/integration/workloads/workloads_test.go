package workloads

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/controller-manager/pkg/controller/deployment"
	"skiff.dev/controller-manager/pkg/controller/replicaset"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string
	ts     *testserver.TestServer
}

// start brings up an API server, a namespace, both controllers and a fake
// kubelet for that namespace.
func start(t *testing.T) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, ctx: ctx, client: ts.Client, ns: "workloads", ts: ts}
	if _, err := ts.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The ServiceAccount admission wants the namespace's default account,
	// which no controller of this test creates.
	if _, err := ts.Client.CoreV1().ServiceAccounts(e.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	rsc := replicaset.NewController(client, factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(),
		broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: replicaset.ControllerName}), nil, replicaset.Options{})
	dc := deployment.NewController(client, factory.Apps().V1().Deployments(), factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(),
		broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: deployment.ControllerName}), nil, deployment.Options{})
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); _ = rsc.Run(ctx, 5) }()
	go func() { defer wg.Done(); _ = dc.Run(ctx, 5) }()
	go func() { defer wg.Done(); e.kubelet() }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		broadcaster.Shutdown()
	})
	return e
}

// kubelet binds every new pod of the namespace to node-1 and reports it
// Running and Ready, and completes graceful deletions, until the test
// ends.
func (e *env) kubelet() {
	for e.ctx.Err() == nil {
		w, err := e.client.CoreV1().Pods(e.ns).Watch(e.ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			switch {
			case pod.DeletionTimestamp != nil:
				zero := int64(0)
				_ = e.client.CoreV1().Pods(e.ns).Delete(e.ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			case pod.Spec.NodeName == "":
				e.bindAndStart(pod)
			}
		}
		w.Stop()
	}
}

func (e *env) bindAndStart(pod *corev1.Pod) {
	err := e.client.CoreV1().Pods(e.ns).Bind(e.ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
	}, metav1.CreateOptions{})
	if err != nil {
		return
	}
	_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase = corev1.PodRunning
		cur.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		_, err = e.client.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// poll waits until cond holds, failing the test with what last held.
func (e *env) poll(what string, cond func() (bool, string)) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v; last state: %s", what, err, last)
	}
}

func (e *env) activePods(selector string) []corev1.Pod {
	list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func (e *env) events(reason string) []corev1.Event {
	list, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

func template(app, image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: app, Image: image}}},
	}
}

func TestReplicaSet(t *testing.T) {
	e := start(t)
	two := int32(2)
	rs, err := e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &two,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: template("nginx", "nginx"),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var first []corev1.Pod
	e.poll("2 pods", func() (bool, string) {
		first = e.activePods("app=nginx")
		return len(first) == 2, fmt.Sprintf("%d pods", len(first))
	})
	for _, p := range first {
		ref := metav1.GetControllerOf(&p)
		if p.GenerateName != "nginx-" || !strings.HasPrefix(p.Name, "nginx-") || ref == nil || ref.UID != rs.UID ||
			ref.Kind != "ReplicaSet" || ref.APIVersion != "apps/v1" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s: generateName %q, controller %+v", p.Name, p.GenerateName, ref)
		}
	}
	e.poll("status 2/2/2/2", func() (bool, string) {
		cur, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		s := cur.Status
		return s.Replicas == 2 && s.FullyLabeledReplicas == 2 && s.ReadyReplicas == 2 && s.AvailableReplicas == 2 &&
			s.ObservedGeneration == cur.Generation, fmt.Sprintf("%+v", s)
	})
	e.poll("SuccessfulCreate events", func() (bool, string) {
		evs := e.events("SuccessfulCreate")
		ok := len(evs) >= 2
		for _, ev := range evs {
			ok = ok && ev.Source.Component == replicaset.ControllerName && strings.HasPrefix(ev.Message, "Created pod: nginx-") &&
				ev.InvolvedObject.Kind == "ReplicaSet" && ev.InvolvedObject.Name == "nginx"
		}
		return ok, fmt.Sprintf("%+v", evs)
	})

	// A deleted pod is replaced.
	victim := first[0].Name
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("a replacement pod", func() (bool, string) {
		pods := e.activePods("app=nginx")
		var names []string
		for _, p := range pods {
			names = append(names, p.Name)
			if p.Name == victim {
				return false, "victim still there"
			}
		}
		return len(pods) == 2, strings.Join(names, ",")
	})

	// Scale to zero.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err
		}
		zero := int32(0)
		cur.Spec.Replicas = &zero
		_, err = e.client.AppsV1().ReplicaSets(e.ns).Update(e.ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.poll("no pods and status 0", func() (bool, string) {
		list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			return false, err.Error()
		}
		cur, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0 && cur.Status.Replicas == 0 && cur.Status.ObservedGeneration == cur.Generation,
			fmt.Sprintf("%d pods, status %+v", len(list.Items), cur.Status)
	})
	if evs := e.events("SuccessfulDelete"); len(evs) < 2 {
		t.Errorf("SuccessfulDelete events = %d, want >= 2", len(evs))
	}
}

func newDeployment(name string, replicas int32, image string) *appsv1.Deployment {
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template(name, image),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
		},
	}
}

func (e *env) getDeployment(name string) *appsv1.Deployment {
	d, err := e.client.AppsV1().Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *env) updateDeployment(name string, mutate func(*appsv1.Deployment)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := e.client.AppsV1().Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(d)
		_, err = e.client.AppsV1().Deployments(e.ns).Update(e.ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// replicaSets returns the ReplicaSets of the namespace, oldest first.
func (e *env) replicaSets() []appsv1.ReplicaSet {
	list, err := e.client.AppsV1().ReplicaSets(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		return list.Items[i].Annotations[deployment.RevisionAnnotation] < list.Items[j].Annotations[deployment.RevisionAnnotation]
	})
	return list.Items
}

func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) appsv1.DeploymentCondition {
	if c := deployment.GetDeploymentCondition(d.Status, t); c != nil {
		return *c
	}
	return appsv1.DeploymentCondition{}
}

// waitComplete waits until d's rollout is complete: every replica updated
// and available, the generation observed, and Progressing says so.
func (e *env) waitComplete(name string) *appsv1.Deployment {
	e.t.Helper()
	var d *appsv1.Deployment
	e.poll("rollout of "+name, func() (bool, string) {
		d = e.getDeployment(name)
		r := *d.Spec.Replicas
		s := d.Status
		p := condition(d, appsv1.DeploymentProgressing)
		return s.ObservedGeneration == d.Generation && s.Replicas == r && s.UpdatedReplicas == r && s.AvailableReplicas == r &&
				s.ReadyReplicas == r && s.UnavailableReplicas == 0 && p.Reason == deployment.NewRSAvailableReason,
			fmt.Sprintf("generation %d status %+v", d.Generation, s)
	})
	return d
}

// availabilityMonitor watches the pods of app and records the fewest
// available (ready, not terminating) pods seen after each event.
type availabilityMonitor struct {
	mu       sync.Mutex
	minSeen  int
	podCount map[string]bool
	events   int
	stop     func()
	done     chan struct{}
}

func (e *env) monitorAvailability(app string) *availabilityMonitor {
	e.t.Helper()
	list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	m := &availabilityMonitor{podCount: map[string]bool{}, done: make(chan struct{})}
	for i := range list.Items {
		m.podCount[list.Items[i].Name] = available(&list.Items[i])
	}
	m.minSeen = m.count()
	w, err := e.client.CoreV1().Pods(e.ns).Watch(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app, ResourceVersion: list.ResourceVersion})
	if err != nil {
		e.t.Fatal(err)
	}
	m.stop = w.Stop
	go func() {
		defer close(m.done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			m.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(m.podCount, pod.Name)
			} else {
				m.podCount[pod.Name] = available(pod)
			}
			m.events++
			m.minSeen = min(m.minSeen, m.count())
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *availabilityMonitor) count() int {
	n := 0
	for _, ok := range m.podCount {
		if ok {
			n++
		}
	}
	return n
}

func (m *availabilityMonitor) finish() (minSeen, events int) {
	m.stop()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.minSeen, m.events
}

func available(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestDeploymentRollingUpdate(t *testing.T) {
	e := start(t)
	if _, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, newDeployment("web", 4, "registry.local/app:a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitComplete("web")
	if d := e.getDeployment("web"); d.Annotations[deployment.RevisionAnnotation] != "1" {
		t.Errorf("deployment revision %q, want 1", d.Annotations[deployment.RevisionAnnotation])
	}

	m := e.monitorAvailability("web")
	e.updateDeployment("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "registry.local/app:b" })
	d := e.waitComplete("web")
	e.poll("old ReplicaSet at zero", func() (bool, string) {
		rss := e.replicaSets()
		var state []string
		ok := len(rss) == 2
		for _, rs := range rss {
			state = append(state, fmt.Sprintf("%s rev %s spec %d status %d", rs.Name, rs.Annotations[deployment.RevisionAnnotation], *rs.Spec.Replicas, rs.Status.Replicas))
			image := rs.Spec.Template.Spec.Containers[0].Image
			want := int32(0)
			if image == "registry.local/app:b" {
				want = 4
			}
			ok = ok && *rs.Spec.Replicas == want && rs.Status.Replicas == want
		}
		return ok, strings.Join(state, "; ")
	})
	minSeen, events := m.finish()
	t.Logf("fewest available pods during the rollout: %d (over %d pod events)", minSeen, events)
	if minSeen < 3 {
		t.Errorf("available pods dropped to %d during the rollout; replicas - maxUnavailable = 3", minSeen)
	}
	if events < 8 {
		t.Errorf("the monitor saw only %d pod events", events)
	}

	rss := e.replicaSets()
	if rss[0].Annotations[deployment.RevisionAnnotation] != "1" || rss[1].Annotations[deployment.RevisionAnnotation] != "2" ||
		rss[1].Spec.Template.Spec.Containers[0].Image != "registry.local/app:b" {
		t.Errorf("ReplicaSet revisions: %s=%q, %s=%q", rss[0].Name, rss[0].Annotations[deployment.RevisionAnnotation],
			rss[1].Name, rss[1].Annotations[deployment.RevisionAnnotation])
	}
	hash := rss[1].Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	if rss[1].Name != "web-"+hash || rss[1].Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash ||
		rss[1].Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
		t.Errorf("new ReplicaSet %s: hash labels %v / %v", rss[1].Name, rss[1].Spec.Selector.MatchLabels, rss[1].Spec.Template.Labels)
	}
	if d.Annotations[deployment.RevisionAnnotation] != "2" {
		t.Errorf("deployment revision %q, want 2", d.Annotations[deployment.RevisionAnnotation])
	}
	if c := condition(d, appsv1.DeploymentAvailable); c.Status != corev1.ConditionTrue || c.Reason != deployment.MinimumReplicasAvailable {
		t.Errorf("Available = %+v", c)
	}
	if c := condition(d, appsv1.DeploymentProgressing); c.Status != corev1.ConditionTrue || c.Reason != deployment.NewRSAvailableReason {
		t.Errorf("Progressing = %+v", c)
	}
	want := fmt.Sprintf("Scaled up replica set %s from 0 to 1", rss[1].Name)
	var msgs []string
	for _, ev := range e.events("ScalingReplicaSet") {
		msgs = append(msgs, ev.Message)
	}
	if !contains(msgs, want) || !contains(msgs, fmt.Sprintf("Scaled up replica set %s from 0 to 4", rss[0].Name)) {
		t.Errorf("ScalingReplicaSet events %q lack %q", msgs, want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDeploymentRollbackPauseResume(t *testing.T) {
	e := start(t)
	if _, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, newDeployment("web", 3, "registry.local/app:a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitComplete("web")
	e.updateDeployment("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "registry.local/app:b" })
	e.waitComplete("web")
	rss := e.replicaSets()
	if len(rss) != 2 {
		t.Fatalf("%d ReplicaSets, want 2", len(rss))
	}
	first := rss[0]

	// Roll back to revision 1 the way kubectl rollout undo does: the
	// Deployment takes revision 1's template again.
	e.rolloutUndo("web", &first)
	d := e.waitComplete("web")
	e.poll("revision 1's ReplicaSet scaled up again", func() (bool, string) {
		rs, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, first.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return *rs.Spec.Replicas == 3 && rs.Status.AvailableReplicas == 3, fmt.Sprintf("%+v", rs.Status)
	})
	back, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, first.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if back.UID != first.UID || back.Annotations[deployment.RevisionAnnotation] != "3" || back.Annotations[deployment.RevisionHistoryAnnotation] != "1" {
		t.Errorf("rolled-back ReplicaSet: uid %s (was %s), annotations %v", back.UID, first.UID, back.Annotations)
	}
	if n := len(e.replicaSets()); n != 2 {
		t.Errorf("%d ReplicaSets after the rollback, want 2 (the old one reused)", n)
	}
	e.poll("deployment revision 3", func() (bool, string) {
		d = e.getDeployment("web")
		return d.Annotations[deployment.RevisionAnnotation] == "3", fmt.Sprint(d.Annotations)
	})

	// Pause: a template change rolls nothing out, scaling still works.
	e.updateDeployment("web", func(d *appsv1.Deployment) { d.Spec.Paused = true })
	e.poll("DeploymentPaused", func() (bool, string) {
		d := e.getDeployment("web")
		c := condition(d, appsv1.DeploymentProgressing)
		return c.Reason == deployment.PausedDeployReason && c.Status == corev1.ConditionUnknown, fmt.Sprintf("%+v", c)
	})
	e.updateDeployment("web", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Image = "registry.local/app:c"
		five := int32(5)
		d.Spec.Replicas = &five
	})
	e.poll("paused scale to 5", func() (bool, string) {
		d := e.getDeployment("web")
		rs, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, first.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.ObservedGeneration == d.Generation && *rs.Spec.Replicas == 5 && rs.Status.AvailableReplicas == 5,
			fmt.Sprintf("observed %d/%d, rs %d/%d", d.Status.ObservedGeneration, d.Generation, *rs.Spec.Replicas, rs.Status.AvailableReplicas)
	})
	if n := len(e.replicaSets()); n != 2 {
		t.Errorf("paused deployment rolled out: %d ReplicaSets", n)
	}
	e.updateDeployment("web", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	d = e.waitComplete("web")
	rss = e.replicaSets()
	if len(rss) != 3 || rss[2].Spec.Template.Spec.Containers[0].Image != "registry.local/app:c" || *rss[2].Spec.Replicas != 5 {
		t.Errorf("after resume: %d ReplicaSets", len(rss))
	}
	if d.Annotations[deployment.RevisionAnnotation] != "4" {
		t.Errorf("revision after resume %q, want 4", d.Annotations[deployment.RevisionAnnotation])
	}
}

// rolloutUndo runs kubectl rollout undo when kubectl is installed, or
// does what it does: copy the old ReplicaSet's template (without the hash
// label) into the Deployment.
func (e *env) rolloutUndo(name string, to *appsv1.ReplicaSet) {
	e.t.Helper()
	if path, err := exec.LookPath("kubectl"); err == nil {
		cmd := exec.CommandContext(e.ctx, path, "--kubeconfig", e.ts.Kubeconfig, "-n", e.ns, "rollout", "undo", "deployment/"+name,
			"--to-revision", to.Annotations[deployment.RevisionAnnotation])
		cmd.Env = append(os.Environ(), "KUBECACHEDIR="+e.t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			e.t.Fatalf("kubectl rollout undo: %v\n%s", err, out)
		}
		e.t.Logf("kubectl: %s", strings.TrimSpace(string(out)))
		return
	}
	e.updateDeployment(name, func(d *appsv1.Deployment) {
		d.Spec.Template = *to.Spec.Template.DeepCopy()
		delete(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	})
}

func TestDeploymentRecreate(t *testing.T) {
	e := start(t)
	d := newDeployment("db", 2, "registry.local/db:a")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if _, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitComplete("db")

	// Watch: no pod of the new template may exist while an old one does.
	list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.client.CoreV1().Pods(e.ns).Watch(e.ctx, metav1.ListOptions{LabelSelector: "app=db", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, p := range list.Items {
		images[p.Name] = p.Spec.Containers[0].Image
	}
	overlap := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(images, p.Name)
			} else {
				images[p.Name] = p.Spec.Containers[0].Image
			}
			seen := map[string]bool{}
			for _, img := range images {
				seen[img] = true
			}
			if len(seen) > 1 {
				select {
				case overlap <- fmt.Sprint(images):
				default:
				}
			}
		}
	}()
	e.updateDeployment("db", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "registry.local/db:b" })
	d = e.waitComplete("db")
	w.Stop()
	<-done
	select {
	case s := <-overlap:
		t.Errorf("old and new pods at the same time: %s", s)
	default:
	}
	rss := e.replicaSets()
	if len(rss) != 2 || *rss[0].Spec.Replicas != 0 || *rss[1].Spec.Replicas != 2 || d.Annotations[deployment.RevisionAnnotation] != "2" {
		t.Errorf("ReplicaSets after Recreate: %d", len(rss))
	}
	if c := condition(d, appsv1.DeploymentAvailable); c.Status != corev1.ConditionTrue {
		t.Errorf("Available = %+v", c)
	}
}

func TestDeploymentScaleLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	e := start(t)
	if _, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, newDeployment("big", 300, "registry.local/app:a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitComplete("big")
	rss := e.replicaSets()
	if len(rss) != 1 || rss[0].Status.Replicas != 300 {
		t.Fatalf("ReplicaSets %d", len(rss))
	}
	list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 300 {
		t.Errorf("%d pods, want exactly 300 (no double creation)", len(list.Items))
	}
}
