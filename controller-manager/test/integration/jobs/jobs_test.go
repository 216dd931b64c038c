package jobs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
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

// start runs an API server and the controller manager with the job,
// ttl-after-finished, replicationcontroller and garbage-collector
// controllers (no scheduler or kubelet: the tests play the kubelet).
func start(t *testing.T) *env {
	t.Helper()
	ts := testserver.Start(t, nil)
	cmtest.Start(t, ts, func(o *cmapp.Options) {
		o.Controllers = []string{"job", "ttl-after-finished", "replicationcontroller", "garbage-collector"}
	})
	return &env{t: t, ctx: context.Background(), client: ts.Client}
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

func newJob(name string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions),
			Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"true"}}},
			}},
		},
	}
}

func (e *env) createJob(j *batchv1.Job) *batchv1.Job {
	e.t.Helper()
	out, err := e.client.BatchV1().Jobs(ns).Create(e.ctx, j, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) job(name string) *batchv1.Job {
	e.t.Helper()
	j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// pods lists the pods of job j (by its controller-uid label).
func (e *env) pods(j *batchv1.Job) []corev1.Pod {
	e.t.Helper()
	l, err := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(j.UID)})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(l.Items, func(a, b int) bool { return l.Items[a].Name < l.Items[b].Name })
	return l.Items
}

func active(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// finish is the kubelet's part: the pod's container exited with code.
func (e *env) finish(name string, code int32) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := e.client.CoreV1().Pods(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Phase = corev1.PodSucceeded
		if code != 0 {
			p.Status.Phase = corev1.PodFailed
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.Now()}}}}
		_, err = e.client.CoreV1().Pods(ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("pod %s status: %v", name, err)
	}
}

func hasCondition(j *batchv1.Job, t batchv1.JobConditionType, reason string) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue && (reason == "" || c.Reason == reason) {
			return true
		}
	}
	return false
}

func (e *env) events(name string) []string {
	e.t.Helper()
	l, err := e.client.CoreV1().Events(ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range l.Items {
		out = append(out, ev.Type+" "+ev.Reason)
	}
	return out
}

// A Job of 5 completions with parallelism 2: never more than 2 pods run,
// each finished pod is counted once and loses its finalizer, and the Job
// completes.
func TestJobCompletes(t *testing.T) {
	e := start(t)
	j := e.createJob(newJob("five", 5, 2))
	finished := map[string]bool{}
	e.poll("5 completions", func() (bool, string) {
		pods := e.pods(j)
		run := active(pods)
		if len(run) > 2 {
			t.Fatalf("%d pods running at once, parallelism 2", len(run))
		}
		for _, p := range run {
			if !finished[p.Name] {
				finished[p.Name] = true
				e.finish(p.Name, 0)
			}
		}
		cur := e.job("five")
		return hasCondition(cur, batchv1.JobComplete, batchv1.JobReasonCompletionsReached),
			fmt.Sprintf("%d pods, status %+v", len(pods), cur.Status)
	})
	cur := e.job("five")
	if cur.Status.Succeeded != 5 || cur.Status.Failed != 0 || cur.Status.Active != 0 || cur.Status.CompletionTime == nil ||
		!hasCondition(cur, batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached) ||
		len(cur.Status.UncountedTerminatedPods.Succeeded) != 0 {
		t.Errorf("status = %+v", cur.Status)
	}
	pods := e.pods(j)
	if len(pods) != 5 {
		t.Errorf("%d pods, want 5", len(pods))
	}
	for _, p := range pods {
		if slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
			t.Errorf("pod %s keeps the tracking finalizer", p.Name)
		}
		if p.Labels[batchv1.JobNameLabel] != "five" || p.Labels["job-name"] != "five" || p.Labels["controller-uid"] != string(j.UID) {
			t.Errorf("pod %s labels = %v", p.Name, p.Labels)
		}
	}
	e.poll("the events", func() (bool, string) {
		evs := e.events("five")
		return slices.Contains(evs, "Normal Completed") && slices.Contains(evs, "Normal SuccessfulCreate"), strings.Join(evs, ", ")
	})
}

// An Indexed Job: each index gets one pod named and labelled for it, with
// JOB_COMPLETION_INDEX; status.completedIndexes follows the successes.
func TestIndexedJob(t *testing.T) {
	e := start(t)
	j := newJob("idx", 3, 3)
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j = e.createJob(j)
	e.poll("3 pods", func() (bool, string) {
		n := len(e.pods(j))
		return n == 3, fmt.Sprintf("%d pods", n)
	})
	for _, p := range e.pods(j) {
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		env := p.Spec.Containers[0].Env
		if p.Labels[batchv1.JobCompletionIndexAnnotation] != ix || p.Spec.Hostname != "idx-"+ix || !strings.HasPrefix(p.Name, "idx-"+ix+"-") ||
			len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom == nil || env[0].ValueFrom.FieldRef == nil {
			t.Errorf("pod %s: %+v %+v", p.Name, p.ObjectMeta, p.Spec)
		}
		if ix == "1" {
			e.finish(p.Name, 0)
		}
	}
	e.poll("index 1 completed", func() (bool, string) {
		cur := e.job("idx")
		return cur.Status.CompletedIndexes == "1" && cur.Status.Succeeded == 1, fmt.Sprintf("%+v", cur.Status)
	})
	for _, p := range active(e.pods(j)) {
		e.finish(p.Name, 0)
	}
	e.poll("complete", func() (bool, string) {
		cur := e.job("idx")
		return hasCondition(cur, batchv1.JobComplete, "") && cur.Status.CompletedIndexes == "0-2", fmt.Sprintf("%+v", cur.Status)
	})
}

// A failing Job with backoffLimit 0 fails at its first failure, with
// upstream's reason and event.
func TestJobBackoffLimit(t *testing.T) {
	e := start(t)
	j := newJob("fails", 3, 2)
	j.Spec.BackoffLimit = ptr.To[int32](0)
	j = e.createJob(j)
	e.poll("2 pods", func() (bool, string) {
		n := len(active(e.pods(j)))
		return n == 2, fmt.Sprintf("%d pods", n)
	})
	e.finish(e.pods(j)[0].Name, 1)
	e.poll("Failed", func() (bool, string) {
		cur := e.job("fails")
		return hasCondition(cur, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded), fmt.Sprintf("%+v", cur.Status)
	})
	cur := e.job("fails")
	// The other pod was deleted and counted as failed too.
	if cur.Status.Failed != 2 || cur.Status.Active != 0 || !hasCondition(cur, batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded) {
		t.Errorf("status = %+v", cur.Status)
	}
	e.poll("the event", func() (bool, string) {
		evs := e.events("fails")
		return slices.Contains(evs, "Warning BackoffLimitExceeded"), strings.Join(evs, ", ")
	})
}

// A pod failure policy: exit code 42 fails the Job at once, whatever the
// back-off limit.
func TestPodFailurePolicyFailJob(t *testing.T) {
	e := start(t)
	j := newJob("pfp", 1, 1)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	j = e.createJob(j)
	e.poll("a pod", func() (bool, string) { n := len(e.pods(j)); return n == 1, fmt.Sprintf("%d pods", n) })
	e.finish(e.pods(j)[0].Name, 42)
	e.poll("Failed", func() (bool, string) {
		cur := e.job("pfp")
		return hasCondition(cur, batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy), fmt.Sprintf("%+v", cur.Status)
	})
}

// Suspending deletes the running pods; resuming creates them again.
func TestSuspendResume(t *testing.T) {
	e := start(t)
	j := e.createJob(newJob("sus", 4, 2))
	e.poll("2 pods", func() (bool, string) { n := len(active(e.pods(j))); return n == 2, fmt.Sprintf("%d pods", n) })
	e.setSuspend("sus", true)
	e.poll("suspended without pods", func() (bool, string) {
		cur := e.job("sus")
		n := len(active(e.pods(j)))
		return hasCondition(cur, batchv1.JobSuspended, "JobSuspended") && n == 0 && cur.Status.Active == 0, fmt.Sprintf("%d pods, %+v", n, cur.Status)
	})
	if cur := e.job("sus"); cur.Status.Failed != 0 {
		t.Errorf("suspension counted failures: %+v", cur.Status)
	}
	e.setSuspend("sus", false)
	e.poll("resumed", func() (bool, string) {
		cur := e.job("sus")
		n := len(active(e.pods(j)))
		return n == 2 && cur.Status.Active == 2, fmt.Sprintf("%d pods, %+v", n, cur.Status)
	})
}

func (e *env) setSuspend(name string, suspend bool) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j := e.job(name)
		j.Spec.Suspend = ptr.To(suspend)
		_, err := e.client.BatchV1().Jobs(ns).Update(e.ctx, j, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// ttlSecondsAfterFinished 0: the finished Job and its pods are deleted.
func TestTTLAfterFinished(t *testing.T) {
	e := start(t)
	j := newJob("ttl", 1, 1)
	j.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	j = e.createJob(j)
	e.poll("a pod", func() (bool, string) { n := len(e.pods(j)); return n == 1, fmt.Sprintf("%d pods", n) })
	e.finish(e.pods(j)[0].Name, 0)
	e.poll("the job and its pod deleted", func() (bool, string) {
		_, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "ttl", metav1.GetOptions{})
		n := len(e.pods(j))
		return apierrors.IsNotFound(err) && n == 0, fmt.Sprintf("get: %v, %d pods", err, n)
	})
}

// A Job deleted while its pods run: the garbage collector deletes them and
// the Job controller removes their tracking finalizers, so they go.
func TestDeletedJobReleasesPods(t *testing.T) {
	e := start(t)
	j := e.createJob(newJob("gone", 2, 2))
	e.poll("2 pods", func() (bool, string) { n := len(e.pods(j)); return n == 2, fmt.Sprintf("%d pods", n) })
	if err := e.client.BatchV1().Jobs(ns).Delete(e.ctx, "gone", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	e.poll("the pods gone", func() (bool, string) {
		pods := e.pods(j)
		var s []string
		for _, p := range pods {
			s = append(s, fmt.Sprintf("%s %v deleting=%v", p.Name, p.Finalizers, p.DeletionTimestamp != nil))
			if p.DeletionTimestamp != nil {
				// The kubelet's part: the containers stopped; the pod
				// goes once no finalizer holds it.
				err := e.client.CoreV1().Pods(ns).Delete(e.ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
				if err != nil && !apierrors.IsNotFound(err) {
					t.Fatal(err)
				}
			}
		}
		return len(pods) == 0, strings.Join(s, "; ")
	})
}

// A ReplicationController keeps its replicas: a deleted pod is replaced,
// and its status counts them.
func TestReplicationController(t *testing.T) {
	e := start(t)
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To[int32](2),
			Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}},
			},
		},
	}
	if _, err := e.client.CoreV1().ReplicationControllers(ns).Create(e.ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list := func() []corev1.Pod {
		l, err := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		return active(l.Items)
	}
	e.poll("2 pods and the status", func() (bool, string) {
		cur, err := e.client.CoreV1().ReplicationControllers(ns).Get(e.ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(list()) == 2 && cur.Status.Replicas == 2 && cur.Status.ObservedGeneration == cur.Generation, fmt.Sprintf("%+v", cur.Status)
	})
	victim := list()[0]
	if ref := metav1.GetControllerOf(&victim); ref == nil || ref.Kind != "ReplicationController" {
		t.Errorf("controller of %s = %+v", victim.Name, ref)
	}
	if err := e.client.CoreV1().Pods(ns).Delete(e.ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e.poll("a replacement", func() (bool, string) {
		pods := list()
		var names []string
		for _, p := range pods {
			names = append(names, p.Name)
		}
		return len(pods) == 2 && !slices.Contains(names, victim.Name), strings.Join(names, ",")
	})
}
