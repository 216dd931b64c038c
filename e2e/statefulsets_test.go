package e2e

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"

	"skiff.dev/kubelet/test/harness"
)

// podLog records, in the order a watch delivers them, when the pods of a
// namespace are added ("add web-0"), first ready ("ready web-0"), start
// terminating ("delete web-0") and are gone ("gone web-0").
type podLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *podLog) watch(t *testing.T, c *cluster, selector string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ready, deleting := map[string]bool{}, map[string]bool{}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			switch {
			case ev.Type == watch.Added:
				l.add("add " + p.Name)
			case ev.Type == watch.Deleted:
				if !deleting[p.Name] {
					l.add("delete " + p.Name)
				}
				delete(deleting, p.Name)
				delete(ready, p.Name)
				l.add("gone " + p.Name)
				continue
			}
			if p.DeletionTimestamp != nil && !deleting[p.Name] {
				deleting[p.Name] = true
				l.add("delete " + p.Name)
			}
			if podReady(p) && !ready[p.Name] {
				ready[p.Name] = true
				l.add("ready " + p.Name)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
}

func (l *podLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, s)
}

// take returns the entries so far and clears them.
func (l *podLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.entries
	l.entries = nil
	return out
}

func entriesWith(log []string, prefix string) []string {
	var out []string
	for _, s := range log {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// waitStatefulSet waits until web's status shows its generation rolled out
// to every replica, all ready, and returns it.
func (c *cluster) waitStatefulSet(t *testing.T, name string) *appsv1.StatefulSet {
	t.Helper()
	var set *appsv1.StatefulSet
	harness.Poll(t, 3*time.Minute, "StatefulSet "+name+" rolled out", func() (bool, string) {
		var err error
		set, err = c.client.AppsV1().StatefulSets("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		s, r := set.Status, *set.Spec.Replicas
		pods, _ := c.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + name})
		return s.ObservedGeneration == set.Generation && s.Replicas == r && s.ReadyReplicas == r && s.AvailableReplicas == r &&
				s.UpdatedReplicas == r && s.CurrentRevision == s.UpdateRevision && pods != nil && len(pods.Items) == int(r),
			fmt.Sprintf("%+v", s)
	})
	return set
}

// execIn runs a shell command in pod through the real kubectl exec.
func (c *cluster) execIn(t *testing.T, pod, command string) string {
	t.Helper()
	out, err := c.kubectlErr("exec", pod, "--", "sh", "-c", command)
	if err != nil {
		t.Fatalf("kubectl exec %s -- %s: %v: %s", pod, command, err, out)
	}
	return strings.TrimSpace(out)
}

// TestStatefulSets runs a StatefulSet of three busybox pods with real
// containers: they start in order, each after its predecessor is ready,
// with their hostname and subdomain in the container (hostname,
// /etc/hostname, /etc/hosts); a changed command rolls out from web-2 down
// to web-0; kubectl rollout undo brings the first revision back (the same
// ControllerRevision); scaling to one deletes web-2, then web-1.
func TestStatefulSets(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "x", Port: 80}}},
	}
	if _, err := c.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var log podLog
	log.watch(t, c, "app=web")

	replicas, grace := int32(3), int64(1)
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "web",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers: []corev1.Container{{Name: "web", Image: "busybox",
						Command: []string{"sh", "-c", "echo v1; exec sleep 3600"}}},
				},
			},
		},
	}
	if _, err := c.client.AppsV1().StatefulSets("default").Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set = c.waitStatefulSet(t, "web")
	rev1 := set.Status.CurrentRevision
	entries := log.take()
	if got := entriesWith(entries, "add "); !slices.Equal(got, []string{"add web-0", "add web-1", "add web-2"}) {
		t.Errorf("creations %v", got)
	}
	for i := 1; i < 3; i++ {
		if slices.Index(entries, fmt.Sprintf("ready web-%d", i-1)) > slices.Index(entries, fmt.Sprintf("add web-%d", i)) {
			t.Errorf("web-%d created before web-%d was ready: %v", i, i-1, entries)
		}
	}

	// Each pod's identity, inside its containers.
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		if got := c.execIn(t, name, "hostname"); got != name {
			t.Errorf("%s: hostname %q", name, got)
		}
		if got := c.execIn(t, name, "cat /etc/hostname"); got != name {
			t.Errorf("%s: /etc/hostname %q", name, got)
		}
		fqdn := name + ".web.default.svc.cluster.local"
		if hosts := c.execIn(t, name, "cat /etc/hosts"); !slices.ContainsFunc(strings.Split(hosts, "\n"), func(line string) bool {
			return strings.HasSuffix(line, "\t"+fqdn+"\t"+name)
		}) {
			t.Errorf("%s: /etc/hosts has no %s line:\n%s", name, fqdn, hosts)
		}
		pod, err := c.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.Hostname != name || pod.Spec.Subdomain != "web" || pod.Labels[appsv1.StatefulSetPodNameLabel] != name ||
			pod.Labels[appsv1.PodIndexLabel] != fmt.Sprint(i) || pod.Labels[appsv1.ControllerRevisionHashLabelKey] != rev1 {
			t.Errorf("%s: hostname %q subdomain %q labels %v", name, pod.Spec.Hostname, pod.Spec.Subdomain, pod.Labels)
		}
	}

	// A changed command rolls out from the highest ordinal down.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.client.AppsV1().StatefulSets("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Template.Spec.Containers[0].Command = []string{"sh", "-c", "echo v2; exec sleep 3600"}
		_, err = c.client.AppsV1().StatefulSets("default").Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c.kubectl(t, "rollout", "status", "statefulset/web", "--timeout=3m")
	set = c.waitStatefulSet(t, "web")
	rev2 := set.Status.CurrentRevision
	if rev2 == rev1 {
		t.Fatalf("the update kept revision %s", rev1)
	}
	if got := entriesWith(log.take(), "delete "); !slices.Equal(got, []string{"delete web-2", "delete web-1", "delete web-0"}) {
		t.Errorf("update deletions %v, want web-2, web-1, web-0", got)
	}
	for i := range 3 {
		if out, _ := c.kubectlErr("logs", fmt.Sprintf("web-%d", i)); strings.TrimSpace(out) != "v2" {
			t.Errorf("web-%d log %q after the update", i, out)
		}
	}

	// kubectl rollout undo goes back to the first template, and the set
	// back to its first revision.
	c.kubectl(t, "rollout", "undo", "statefulset/web")
	set = c.waitStatefulSet(t, "web")
	if set.Status.CurrentRevision != rev1 || set.Status.UpdateRevision != rev1 {
		t.Errorf("after the rollback: current %s update %s, want %s", set.Status.CurrentRevision, set.Status.UpdateRevision, rev1)
	}
	revs, err := c.client.AppsV1().ControllerRevisions("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(revs.Items) != 2 {
		t.Errorf("%d ControllerRevisions after the rollback, want 2", len(revs.Items))
	}
	if out, _ := c.kubectlErr("logs", "web-0"); strings.TrimSpace(out) != "v1" {
		t.Errorf("web-0 log %q after the rollback", out)
	}
	log.take()

	// Scaling to one deletes web-2, then web-1 once web-2 is gone.
	c.kubectl(t, "scale", "statefulset/web", "--replicas=1")
	c.waitStatefulSet(t, "web")
	entries = log.take()
	if got := entriesWith(entries, "delete "); !slices.Equal(got, []string{"delete web-2", "delete web-1"}) {
		t.Errorf("scale-down deletions %v", got)
	}
	if slices.Index(entries, "gone web-2") > slices.Index(entries, "delete web-1") {
		t.Errorf("web-1 deleted before web-2 was gone: %v", entries)
	}
}
