package statefulsets

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string

	mu  sync.Mutex
	log []string // "add web-0", "ready web-0", "delete web-0", "gone web-0"
}

// start runs an API server, the controller manager with the statefulset
// controller and the garbage collector, and the test's kubelet.
func start(t *testing.T) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, ctx: ctx, client: ts.Client, ns: "sts"}
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The ServiceAccount admission wants the namespace's default account,
	// which no controller of this test creates.
	if _, err := e.client.CoreV1().ServiceAccounts(e.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Watch before anything is created, so the log misses nothing.
	w, err := e.client.CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); e.kubelet(w) }()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		wg.Wait()
	})
	cmtest.Start(t, ts, func(o *cmapp.Options) {
		o.Controllers = []string{"statefulset", "garbage-collector"}
	})
	return e
}

func (e *env) record(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
}

// logged returns the log, and clears it when clear is set.
func (e *env) logged(clear bool) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := slices.Clone(e.log)
	if clear {
		e.log = nil
	}
	return out
}

// kubelet binds each new pod, reports it Running and Ready and finishes
// graceful deletions, logging each step in watch order.
func (e *env) kubelet(w watch.Interface) {
	deleting := map[string]bool{}
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		switch {
		case ev.Type == watch.Added:
			e.record("add " + pod.Name)
			e.bindAndStart(pod)
		case ev.Type == watch.Deleted:
			if !deleting[pod.Name] {
				e.record("delete " + pod.Name)
			}
			delete(deleting, pod.Name)
			e.record("gone " + pod.Name)
		case pod.DeletionTimestamp != nil && !deleting[pod.Name]:
			deleting[pod.Name] = true
			e.record("delete " + pod.Name)
			_ = e.client.CoreV1().Pods(e.ns).Delete(e.ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
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
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
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
	if err == nil {
		e.record("ready " + pod.Name)
	}
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

func (e *env) getSet(name string) *appsv1.StatefulSet {
	e.t.Helper()
	set, err := e.client.AppsV1().StatefulSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return set
}

func (e *env) updateSet(name string, mutate func(*appsv1.StatefulSet)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set, err := e.client.AppsV1().StatefulSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(set)
		_, err = e.client.AppsV1().StatefulSets(e.ns).Update(e.ctx, set, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// waitRolledOut waits until the set's status shows its generation with
// every replica ready and at the update revision, which is current.
func (e *env) waitRolledOut(name string) *appsv1.StatefulSet {
	e.t.Helper()
	var set *appsv1.StatefulSet
	e.poll("StatefulSet "+name+" rolled out", func() (bool, string) {
		set = e.getSet(name)
		s := set.Status
		r := *set.Spec.Replicas
		return s.ObservedGeneration == set.Generation && s.Replicas == r && s.ReadyReplicas == r && s.AvailableReplicas == r &&
			s.UpdatedReplicas == r && s.CurrentReplicas == r && s.CurrentRevision == s.UpdateRevision, fmt.Sprintf("%+v", s)
	})
	return set
}

func (e *env) podNames(selector string) []string {
	list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

func (e *env) claimNames() []string {
	list, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, c := range list.Items {
		if c.DeletionTimestamp == nil {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}

func (e *env) revisionCount(selector string) int {
	list, err := e.client.AppsV1().ControllerRevisions(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(list.Items)
}

// only returns the entries of log with prefix.
func only(log []string, prefix string) []string {
	var out []string
	for _, s := range log {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func index(log []string, s string) int { return slices.Index(log, s) }

func newSet(name string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
			},
		},
	}
}

// An OrderedReady set starts its pods one after the other, rolls an update
// out from the highest ordinal down, rolls back to its first revision,
// scales down in reverse order one at a time, and its claims follow the
// retention policy.
func TestStatefulSetOrderedLifecycle(t *testing.T) {
	e := start(t)
	set := newSet("web", 3)
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
	}
	if _, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set = e.waitRolledOut("web")
	rev1 := set.Status.CurrentRevision

	// In order: each pod is created only once its predecessor is ready.
	log := e.logged(true)
	if got := only(log, "add "); !slices.Equal(got, []string{"add web-0", "add web-1", "add web-2"}) {
		t.Errorf("creations %v", got)
	}
	for i := 1; i < 3; i++ {
		if index(log, fmt.Sprintf("ready web-%d", i-1)) > index(log, fmt.Sprintf("add web-%d", i)) {
			t.Errorf("web-%d created before web-%d was ready: %v", i, i-1, log)
		}
	}
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		pod, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.Hostname != name || pod.Spec.Subdomain != "web" || pod.Labels[appsv1.StatefulSetPodNameLabel] != name ||
			pod.Labels[appsv1.PodIndexLabel] != fmt.Sprint(i) || pod.Labels[appsv1.ControllerRevisionHashLabelKey] != rev1 {
			t.Errorf("%s: hostname %q subdomain %q labels %v", name, pod.Spec.Hostname, pod.Spec.Subdomain, pod.Labels)
		}
		claim, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(e.ctx, "data-"+name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("claim of %s: %v", name, err)
		}
		if ref := metav1.GetControllerOf(claim); ref == nil || ref.Kind != "StatefulSet" || ref.UID != set.UID {
			t.Errorf("claim data-%s owners %+v, want the set (whenDeleted Delete)", name, claim.OwnerReferences)
		}
		if v := pod.Spec.Volumes; len(v) == 0 || v[0].PersistentVolumeClaim == nil || v[0].PersistentVolumeClaim.ClaimName != "data-"+name {
			t.Errorf("%s volumes %+v", name, v)
		}
	}

	// A rolling update replaces web-2, then web-1, then web-0.
	e.updateSet("web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "busybox:1.37" })
	set = e.waitRolledOut("web")
	rev2 := set.Status.CurrentRevision
	if rev2 == rev1 {
		t.Fatalf("the update kept revision %s", rev1)
	}
	if got := only(e.logged(true), "delete "); !slices.Equal(got, []string{"delete web-2", "delete web-1", "delete web-0"}) {
		t.Errorf("update deletions %v, want highest ordinal first", got)
	}
	if n := e.revisionCount("app=web"); n != 2 {
		t.Errorf("%d revisions after the update, want 2", n)
	}

	// Rolling back reuses the first revision.
	e.updateSet("web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "busybox:1.36" })
	set = e.waitRolledOut("web")
	if set.Status.CurrentRevision != rev1 || set.Status.UpdateRevision != rev1 {
		t.Errorf("after the rollback: current %s update %s, want %s", set.Status.CurrentRevision, set.Status.UpdateRevision, rev1)
	}
	if n := e.revisionCount("app=web"); n != 2 {
		t.Errorf("%d revisions after the rollback, want 2", n)
	}
	e.logged(true)

	// Scaling down deletes web-2, and web-1 only once web-2 is gone; the
	// claims of the pods scaled away go with them.
	e.updateSet("web", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
	e.waitRolledOut("web")
	e.poll("pods scaled down", func() (bool, string) {
		got := e.podNames("app=web")
		return slices.Equal(got, []string{"web-0"}), fmt.Sprint(got)
	})
	log = e.logged(true)
	if got := only(log, "delete "); !slices.Equal(got, []string{"delete web-2", "delete web-1"}) {
		t.Errorf("scale-down deletions %v", got)
	}
	if index(log, "gone web-2") > index(log, "delete web-1") {
		t.Errorf("web-1 deleted before web-2 was gone: %v", log)
	}
	e.poll("the claims of web-1 and web-2 deleted", func() (bool, string) {
		got := e.claimNames()
		return slices.Equal(got, []string{"data-web-0"}), fmt.Sprint(got)
	})

	// Deleting the set deletes its pods and, with whenDeleted Delete, the
	// claim that is left.
	if err := e.client.AppsV1().StatefulSets(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("pods and claims of the deleted set gone", func() (bool, string) {
		pods, claims := e.podNames("app=web"), e.claimNames()
		return len(pods) == 0 && len(claims) == 0, fmt.Sprintf("pods %v claims %v", pods, claims)
	})
}

// A Parallel set creates its pods without waiting; a partition keeps the
// pods below it at the current revision; events carry upstream's reasons.
func TestStatefulSetParallelPartition(t *testing.T) {
	e := start(t)
	set := newSet("db", 3)
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{
		Type:          appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)},
	}
	if _, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set = e.waitRolledOut("db")
	rev1 := set.Status.CurrentRevision
	if got := e.podNames("app=db"); !slices.Equal(got, []string{"db-1", "db-2", "db-3"}) {
		t.Errorf("pods %v, want db-1..db-3 (ordinals.start 1)", got)
	}
	e.poll("SuccessfulCreate events", func() (bool, string) {
		list, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, ev := range list.Items {
			if ev.Reason == "SuccessfulCreate" && ev.InvolvedObject.Name == "db" && ev.Source.Component == "statefulset-controller" {
				n++
			}
		}
		return n == 3, fmt.Sprintf("%d events", n)
	})

	// Partition 2: only the ordinals at index 2 and up (db-3) update.
	e.updateSet("db", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "busybox:1.37" })
	var rev2 string
	e.poll("db-3 updated", func() (bool, string) {
		set := e.getSet("db")
		rev2 = set.Status.UpdateRevision
		pod, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "db-3", metav1.GetOptions{})
		if apierrors.IsNotFound(err) || err != nil {
			return false, fmt.Sprint(err)
		}
		return rev2 != rev1 && pod.Labels[appsv1.ControllerRevisionHashLabelKey] == rev2 && set.Status.UpdatedReplicas == 1 &&
			set.Status.ReadyReplicas == 3, fmt.Sprintf("%+v", set.Status)
	})
	set = e.getSet("db")
	if set.Status.CurrentRevision != rev1 || set.Status.CurrentReplicas != 2 {
		t.Errorf("with the partition: %+v", set.Status)
	}
	for _, name := range []string{"db-1", "db-2"} {
		pod, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Labels[appsv1.ControllerRevisionHashLabelKey] != rev1 {
			t.Errorf("%s moved to %s below the partition", name, pod.Labels[appsv1.ControllerRevisionHashLabelKey])
		}
	}
	// Lifting the partition finishes the rollout.
	e.updateSet("db", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0) })
	set = e.waitRolledOut("db")
	if set.Status.CurrentRevision != rev2 {
		t.Errorf("after the partition went: %+v", set.Status)
	}
}

// A set whose pods the API server refuses (a name so long that the
// controller-revision-hash label value, "<set>-<hash>", passes 63
// characters) gets FailedCreate events and is retried, while another set
// runs.
func TestStatefulSetFailedCreateDoesNotBlockOthers(t *testing.T) {
	e := start(t)
	long := "s" + strings.Repeat("x", 57) // 58 characters: the label value is longer than 63
	bad := newSet(long, 1)
	bad.Spec.Selector.MatchLabels = map[string]string{"app": "bad"}
	bad.Spec.Template.Labels = map[string]string{"app": "bad"}
	if _, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, newSet("good", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRolledOut("good")
	e.poll("FailedCreate events on the refused set", func() (bool, string) {
		list, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var msgs []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == long && ev.Reason == "FailedCreate" && ev.Type == corev1.EventTypeWarning {
				msgs = append(msgs, ev.Message)
				if ev.Count >= 2 || len(msgs) >= 2 {
					return strings.Contains(ev.Message, "create Pod "+long+"-0 in StatefulSet "+long+" failed error:"), ev.Message
				}
			}
		}
		return false, fmt.Sprint(msgs)
	})
	if pods := e.podNames("app=bad"); len(pods) != 0 {
		t.Errorf("pods of the refused set: %v", pods)
	}
	if set := e.getSet(long); set.Status.ObservedGeneration != set.Generation || set.Status.UpdateRevision == "" {
		t.Errorf("the refused set's status: %+v", set.Status)
	}
}
