package daemonsets

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/pkg/controller/daemonset"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const (
	timeout = 60 * time.Second
	ns      = "default"
)

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
}

// start runs an API server and the controller manager with only the
// daemonset controller, and registers nodes.
func start(t *testing.T, nodes ...*corev1.Node) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	cmtest.Start(t, ts, func(o *cmapp.Options) { o.Controllers = []string{"daemonset"} })
	e := &env{t: t, ctx: context.Background(), client: ts.Client}
	for _, n := range nodes {
		e.createNode(n)
	}
	return e
}

func node(name string, lbls map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Spec: corev1.NodeSpec{Taints: taints}}
}

func (e *env) createNode(n *corev1.Node) {
	e.t.Helper()
	if _, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func newDS(name string, mutate func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Command: []string{"sleep", "3600"}}}},
			},
		},
	}
	if mutate != nil {
		mutate(ds)
	}
	return ds
}

func (e *env) createDS(ds *appsv1.DaemonSet) *appsv1.DaemonSet {
	e.t.Helper()
	out, err := e.client.AppsV1().DaemonSets(ns).Create(e.ctx, ds, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) updateDS(name string, mutate func(*appsv1.DaemonSet)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ds, err := e.client.AppsV1().DaemonSets(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(ds)
		_, err = e.client.AppsV1().DaemonSets(ns).Update(e.ctx, ds, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) updateNode(name string, mutate func(*corev1.Node)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(n)
		_, err = e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// poll waits until cond holds, failing with the last state it reported.
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

// pods returns the live pods of app (not being deleted).
func (e *env) pods(app string) []corev1.Pod {
	e.t.Helper()
	l, err := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// playSchedulerAndKubelet binds each unscheduled pod of app to the node
// its daemon affinity names, finishes deletions (no kubelet is there to
// do it) and marks bound pods Running and Ready. It reports what it did
// not finish.
func (e *env) playSchedulerAndKubelet(app string) error {
	l, err := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return err
	}
	for i := range l.Items {
		p := &l.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
			zero := int64(0)
			err = e.client.CoreV1().Pods(ns).Delete(e.ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		case p.Spec.NodeName == "":
			target, terr := daemonset.TargetNodeName(p)
			if terr != nil {
				return terr
			}
			err = e.client.CoreV1().Pods(ns).Bind(e.ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
				Target: corev1.ObjectReference{Kind: "Node", Name: target}}, metav1.CreateOptions{})
		case p.Status.Phase == corev1.PodPending:
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			_, err = e.client.CoreV1().Pods(ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

func nodesOf(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		n, _ := daemonset.TargetNodeName(&p)
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (e *env) status(name string) appsv1.DaemonSetStatus {
	e.t.Helper()
	ds, err := e.client.AppsV1().DaemonSets(ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ds.Status
}

// waitRolledOut plays the scheduler and kubelet until every wanted node
// runs one ready pod of the DaemonSet's current generation, as `kubectl
// rollout status` judges it, on exactly wantNodes.
func (e *env) waitRolledOut(name, wantNodes string) {
	e.t.Helper()
	e.poll(name+" rolled out on "+wantNodes, func() (bool, string) {
		if err := e.playSchedulerAndKubelet(name); err != nil {
			return false, err.Error()
		}
		ds, err := e.client.AppsV1().DaemonSets(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := ds.Status
		pods := e.pods(name)
		state := fmt.Sprintf("generation %d, status %+v, pods on %s", ds.Generation, st, nodesOf(pods))
		want := int32(len(strings.Split(wantNodes, ",")))
		return st.ObservedGeneration >= ds.Generation && st.DesiredNumberScheduled == want && st.UpdatedNumberScheduled == want &&
			st.NumberAvailable == want && st.NumberReady == want && st.CurrentNumberScheduled == want && st.NumberMisscheduled == 0 &&
			st.NumberUnavailable == 0 && nodesOf(pods) == wantNodes, state
	})
}

func (e *env) events(name string) map[string]int {
	e.t.Helper()
	l, err := e.client.CoreV1().Events(ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, ev := range l.Items {
		out[ev.Reason] += int(max(ev.Count, 1))
	}
	return out
}

// A DaemonSet runs one pod on each node its selector, affinity and
// tolerations allow; a new node gets its pod; a node whose labels change
// loses or gains it.
func TestDaemonSetPlacement(t *testing.T) {
	worker := map[string]string{"role": "worker"}
	e := start(t,
		node("n1", worker), node("n2", worker), node("n3", nil),
		node("n4", worker, corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}),
		node("n5", worker, corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute}))
	e.createDS(newDS("agent", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = worker }))
	// n3 lacks the label, n4's taint is not tolerated; n5's not-ready
	// taint is tolerated by every daemon pod.
	e.waitRolledOut("agent", "n1,n2,n5")

	pods := e.pods("agent")
	revs, err := e.client.AppsV1().ControllerRevisions(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	if len(revs.Items) != 1 || revs.Items[0].Revision != 1 {
		t.Fatalf("revisions = %d, want one, numbered 1", len(revs.Items))
	}
	hash := revs.Items[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	for _, p := range pods {
		if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != hash || p.Labels[daemonset.TemplateGenerationLabel] != "1" {
			t.Errorf("pod %s labels %v, want controller-revision-hash %s and pod-template-generation 1", p.Name, p.Labels, hash)
		}
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || terms[0].MatchFields[0].Key != "metadata.name" || terms[0].MatchFields[0].Values[0] != p.Spec.NodeName {
			t.Errorf("pod %s on %s has affinity %+v", p.Name, p.Spec.NodeName, terms)
		}
	}

	// A new node gets its pod.
	e.createNode(node("n6", worker))
	e.waitRolledOut("agent", "n1,n2,n5,n6")
	// A node that gains the label gains the pod; one that loses it, loses it.
	e.updateNode("n3", func(n *corev1.Node) { n.Labels = worker })
	e.updateNode("n1", func(n *corev1.Node) { n.Labels = nil })
	e.waitRolledOut("agent", "n2,n3,n5,n6")
	// A NoExecute taint evicts.
	e.updateNode("n2", func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}
	})
	e.waitRolledOut("agent", "n3,n5,n6")
	if ev := e.events("agent"); ev["SuccessfulCreate"] < 5 || ev["SuccessfulDelete"] < 2 {
		t.Errorf("events = %v, want SuccessfulCreate and SuccessfulDelete", ev)
	}
}

// RollingUpdate replaces pods within maxUnavailable with the new template;
// a rollback (what `kubectl rollout undo` does: the old revision's patch
// applied to the DaemonSet) makes the old revision current again.
func TestDaemonSetRollingUpdateAndRollback(t *testing.T) {
	e := start(t, node("n1", nil), node("n2", nil), node("n3", nil))
	e.createDS(newDS("agent", func(ds *appsv1.DaemonSet) { ds.Spec.MinReadySeconds = 1 }))
	e.waitRolledOut("agent", "n1,n2,n3")
	v1Revs := e.revisions("agent")

	e.updateDS("agent", func(ds *appsv1.DaemonSet) {
		ds.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "VERSION", Value: "2"}}
	})
	// With maxUnavailable 1 (the default) no more than one node is ever
	// without an available pod.
	maxUnavailable := int32(0)
	e.poll("agent rolled out to v2", func() (bool, string) {
		if err := e.playSchedulerAndKubelet("agent"); err != nil {
			return false, err.Error()
		}
		ds, err := e.client.AppsV1().DaemonSets(ns).Get(e.ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := ds.Status
		if st.ObservedGeneration == ds.Generation {
			maxUnavailable = max(maxUnavailable, st.NumberUnavailable)
		}
		return st.ObservedGeneration == ds.Generation && st.UpdatedNumberScheduled == 3 && st.NumberAvailable == 3 &&
			len(e.pods("agent")) == 3, fmt.Sprintf("%+v", st)
	})
	if maxUnavailable > 1 {
		t.Errorf("status showed %d unavailable during the update, want at most maxUnavailable 1", maxUnavailable)
	}
	revs := e.revisions("agent")
	if len(revs) != 2 {
		t.Fatalf("revisions %v, want 2", revs)
	}
	v2Hash := revs[1].Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	for _, p := range e.pods("agent") {
		if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != v2Hash || p.Labels[daemonset.TemplateGenerationLabel] != "2" ||
			len(p.Spec.Containers[0].Env) != 1 {
			t.Errorf("pod %s after the update: labels %v env %v", p.Name, p.Labels, p.Spec.Containers[0].Env)
		}
	}

	// Roll back to revision 1 as kubectl rollout undo does.
	if _, err := e.client.AppsV1().DaemonSets(ns).Patch(e.ctx, "agent", types.StrategicMergePatchType, v1Revs[0].Data.Raw, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRolledOut("agent", "n1,n2,n3")
	revs = e.revisions("agent")
	if len(revs) != 2 || revs[1].Name != v1Revs[0].Name || revs[1].Revision != 3 {
		t.Fatalf("revisions after rollback %v, want %s renumbered 3 and no new one", revs, v1Revs[0].Name)
	}
	for _, p := range e.pods("agent") {
		if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != v1Revs[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] || len(p.Spec.Containers[0].Env) != 0 {
			t.Errorf("pod %s after the rollback: labels %v env %v", p.Name, p.Labels, p.Spec.Containers[0].Env)
		}
	}
}

// revisions returns the DaemonSet's revisions, by number.
func (e *env) revisions(app string) []appsv1.ControllerRevision {
	e.t.Helper()
	l, err := e.client.AppsV1().ControllerRevisions(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Revision < l.Items[j].Revision })
	return l.Items
}

// With maxSurge the new pod starts beside the old one, which goes once the
// new one is available; OnDelete replaces a pod only when it is deleted.
func TestDaemonSetSurgeAndOnDelete(t *testing.T) {
	e := start(t, node("n1", nil), node("n2", nil))
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	e.createDS(newDS("surge", func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &zero, MaxSurge: &one}}
	}))
	e.waitRolledOut("surge", "n1,n2")
	e.updateDS("surge", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Command = []string{"sleep", "7200"} })
	e.poll("surge rolled out", func() (bool, string) {
		if err := e.playSchedulerAndKubelet("surge"); err != nil {
			return false, err.Error()
		}
		st := e.status("surge")
		// Every node keeps a ready pod throughout: the old one goes only
		// once the new one is ready. (Status may lag: it counts the oldest
		// pod per node, and creation times have a one-second resolution.)
		pods := e.pods("surge")
		readyOn := map[string]bool{}
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && len(p.Status.Conditions) > 0 {
				readyOn[p.Spec.NodeName] = true
			}
		}
		if !readyOn["n1"] || !readyOn["n2"] {
			e.t.Errorf("a node without a ready pod with maxUnavailable 0: ready on %v", readyOn)
		}
		return st.UpdatedNumberScheduled == 2 && len(pods) == 2 && pods[0].Spec.Containers[0].Command[1] == "7200" &&
			pods[1].Spec.Containers[0].Command[1] == "7200", fmt.Sprintf("%+v, pods on %s", st, nodesOf(pods))
	})

	e.createDS(newDS("ondelete", func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	}))
	e.waitRolledOut("ondelete", "n1,n2")
	e.updateDS("ondelete", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Command = []string{"sleep", "7200"} })
	e.poll("ondelete status observes generation 2", func() (bool, string) {
		ds, err := e.client.AppsV1().DaemonSets(ns).Get(e.ctx, "ondelete", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ds.Status.ObservedGeneration == 2 && ds.Status.UpdatedNumberScheduled == 0, fmt.Sprintf("%+v", ds.Status)
	})
	victim := e.pods("ondelete")[0]
	zeroGrace := int64(0)
	if err := e.client.CoreV1().Pods(ns).Delete(e.ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: &zeroGrace}); err != nil {
		t.Fatal(err)
	}
	e.poll("the deleted pod replaced with the new template", func() (bool, string) {
		if err := e.playSchedulerAndKubelet("ondelete"); err != nil {
			return false, err.Error()
		}
		st := e.status("ondelete")
		return st.UpdatedNumberScheduled == 1 && st.NumberAvailable == 2, fmt.Sprintf("%+v", st)
	})
}

// A failed daemon pod is deleted (FailedDaemonPod) and replaced.
func TestDaemonSetReplacesFailedPod(t *testing.T) {
	e := start(t, node("n1", nil))
	e.createDS(newDS("agent", nil))
	e.waitRolledOut("agent", "n1")
	p := e.pods("agent")[0]
	p.Status.Phase = corev1.PodFailed
	p.Status.Conditions = nil
	if _, err := e.client.CoreV1().Pods(ns).UpdateStatus(e.ctx, &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("a new pod replacing the failed one", func() (bool, string) {
		if err := e.playSchedulerAndKubelet("agent"); err != nil {
			return false, err.Error()
		}
		pods := e.pods("agent")
		return len(pods) == 1 && pods[0].UID != p.UID && pods[0].Status.Phase == corev1.PodRunning, fmt.Sprintf("%d pods", len(pods))
	})
	e.poll("FailedDaemonPod event", func() (bool, string) {
		ev := e.events("agent")
		return ev["FailedDaemonPod"] >= 1, fmt.Sprint(ev)
	})
}
