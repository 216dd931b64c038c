package job

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

var now = time.Unix(1_700_000_000, 0)

type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	clock    *clocktesting.FakeClock
	jobIdx   cache.Indexer
	podIdx   cache.Indexer
	recorder *record.FakeRecorder
	created  atomic.Int64
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(1000), clock: clocktesting.NewFakeClock(now)}
	// The fake clientset implements neither generateName nor uids.
	f.client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		p := action.(core.CreateAction).GetObject().(*corev1.Pod)
		if p.Name == "" {
			n := f.created.Add(1)
			p.Name = fmt.Sprintf("%s%05d", p.GenerateName, n)
			p.UID = types.UID(p.Name + "-uid")
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(f.client, 0)
	jobInf, podInf := factory.Batch().V1().Jobs(), factory.Core().V1().Pods()
	f.c = NewController(f.client, jobInf, podInf, f.recorder, nil, Options{Clock: f.clock, SyncBatchPeriod: -1})
	f.jobIdx, f.podIdx = jobInf.Informer().GetIndexer(), podInf.Informer().GetIndexer()
	for _, o := range objs {
		switch o := o.(type) {
		case *batchv1.Job:
			_ = f.jobIdx.Add(o)
		case *corev1.Pod:
			_ = f.podIdx.Add(o)
		}
	}
	return f
}

// sync runs one sync of job; refresh copies what the client stores into the
// informer caches, as the watch would.
func (f *fixture) sync(job *batchv1.Job) error {
	f.t.Helper()
	f.client.ClearActions()
	ctx := klog.NewContext(context.Background(), klog.Background())
	return f.c.sync(ctx, job.Namespace+"/"+job.Name)
}

func (f *fixture) refresh() {
	f.t.Helper()
	jobs, _ := f.client.BatchV1().Jobs("").List(context.Background(), metav1.ListOptions{})
	pods, _ := f.client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	f.jobIdx.Replace(nil, "")
	for i := range jobs.Items {
		_ = f.jobIdx.Add(&jobs.Items[i])
	}
	// Pods go through the handlers, as the informer would deliver them.
	seen := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		seen[p.Name] = true
		old, ok, _ := f.podIdx.Get(p)
		_ = f.podIdx.Add(p)
		if !ok {
			f.c.addPod(p)
			continue
		}
		oldPod := old.(*corev1.Pod).DeepCopy()
		oldPod.ResourceVersion += "-old"
		f.c.updatePod(oldPod, p)
	}
	for _, o := range f.podIdx.List() {
		if p := o.(*corev1.Pod); !seen[p.Name] {
			_ = f.podIdx.Delete(p)
			f.c.deletePod(p, true)
		}
	}
	f.client.ClearActions()
}

func (f *fixture) job(name string) *batchv1.Job {
	f.t.Helper()
	j, err := f.client.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

// actions returns "verb resource[/subresource] [name]" of the recorded
// actions, without informers' list and watch.
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

func (f *fixture) actionsOf(verb, resource string) []core.Action {
	var out []core.Action
	for _, a := range f.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			out = append(out, a)
		}
	}
	return out
}

func (f *fixture) createdPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, a := range f.actionsOf("create", "pods") {
		out = append(out, a.(core.CreateAction).GetObject().(*corev1.Pod))
	}
	return out
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func hasEvent(evs []string, prefix string) bool {
	return slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, prefix) })
}

func newJob(name string, completions, parallelism int32) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), Generation: 1, ResourceVersion: "1"},
		Spec: batchv1.JobSpec{
			Completions:          &completions,
			Parallelism:          &parallelism,
			BackoffLimit:         ptr.To[int32](6),
			CompletionMode:       ptr.To(batchv1.NonIndexedCompletion),
			Suspend:              ptr.To(false),
			PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: name + "-uid"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{batchv1.ControllerUidLabel: name + "-uid", batchv1.JobNameLabel: name}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
			},
		},
	}
	return j
}

func indexed(j *batchv1.Job) *batchv1.Job {
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	return j
}

// newPod is a pod of job in phase, holding the tracking finalizer.
func newPod(name string, job *batchv1.Job, phase corev1.PodPhase) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), ResourceVersion: "1",
			Labels: job.Spec.Template.Labels, CreationTimestamp: metav1.NewTime(now.Add(-time.Minute)),
			Finalizers:      []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{*controllerutil.NewControllerRef(job, "batch/v1", "Job")}},
		Spec:   corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: phase},
	}
	if phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		code := int32(0)
		if phase == corev1.PodFailed {
			code = 1
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(now)}}}}
	}
	return p
}

func withIndex(p *corev1.Pod, ix int) *corev1.Pod {
	p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(ix)}
	return p
}

func withExitCode(p *corev1.Pod, code int32) *corev1.Pod {
	p.Status.ContainerStatuses[0].State.Terminated.ExitCode = code
	return p
}

func condition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func TestCreatesParallelismPods(t *testing.T) {
	job := newJob("pi", 5, 2)
	f := newFixture(t, job)
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	pods := f.createdPods()
	if len(pods) != 2 {
		t.Fatalf("created %d pods, want 2 (actions %v)", len(pods), f.actions())
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if p.GenerateName != "pi-" || ref == nil || ref.Kind != "Job" || ref.UID != job.UID ||
			!slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) || p.Labels[batchv1.JobNameLabel] != "pi" {
			t.Errorf("pod = %+v", p.ObjectMeta)
		}
	}
	if evs := f.events(); len(evs) != 2 || !hasEvent(evs, "Normal SuccessfulCreate Created pod: pi-") {
		t.Errorf("events = %v", evs)
	}
	got := f.job("pi").Status
	if got.Active != 2 || got.StartTime == nil || !got.StartTime.Time.Equal(now) || ptr.Deref(got.Ready, -1) != 0 || ptr.Deref(got.Terminating, -1) != 0 {
		t.Errorf("status = %+v", got)
	}
	// Expectations: a second sync before the pods show up creates none.
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	if n := len(f.createdPods()); n != 0 {
		t.Errorf("second sync created %d pods", n)
	}
}

func TestWorkQueueJobWithoutCompletions(t *testing.T) {
	job := newJob("wq", 0, 3)
	job.Spec.Completions = nil
	running := newPod("wq-a", job, corev1.PodRunning)
	done := newPod("wq-b", job, corev1.PodSucceeded)
	f := newFixture(t, job, running, done)
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	// One success: no more pods are created, the running one is left.
	if n := len(f.createdPods()); n != 0 {
		t.Errorf("created %d pods after a success", n)
	}
	if j := f.job("wq"); j.Status.Succeeded != 1 || j.Status.Active != 1 || condition(j, batchv1.JobComplete) != nil {
		t.Errorf("status = %+v", j.Status)
	}
}

func TestIndexedPods(t *testing.T) {
	job := indexed(newJob("idx", 3, 3))
	job.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
	f := newFixture(t, job, withIndex(newPod("idx-1-abcde", job, corev1.PodRunning), 1))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	pods := f.createdPods()
	var got []string
	for _, p := range pods {
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		got = append(got, ix)
		env := p.Spec.Containers[0].Env
		if p.Labels[batchv1.JobCompletionIndexAnnotation] != ix || p.Spec.Hostname != "idx-"+ix || p.GenerateName != "idx-"+ix+"-" ||
			len(env) != 2 || env[1].Name != "JOB_COMPLETION_INDEX" || env[1].ValueFrom == nil ||
			env[1].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			t.Errorf("pod of index %s = %+v %+v", ix, p.ObjectMeta, p.Spec)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"0", "2"}) {
		t.Errorf("created indexes %v, want [0 2]", got)
	}
}

func TestIndexedCompletedIndexes(t *testing.T) {
	job := indexed(newJob("idx", 5, 5))
	job.Status.CompletedIndexes = "0"
	job.Status.Succeeded = 1
	pods := []runtime.Object{job,
		withIndex(newPod("p1", job, corev1.PodSucceeded), 1),
		withIndex(newPod("p3", job, corev1.PodSucceeded), 3),
		withIndex(newPod("p3b", job, corev1.PodSucceeded), 3), // a duplicate: counted once
		withIndex(newPod("p2", job, corev1.PodRunning), 2),
		withIndex(newPod("p4", job, corev1.PodRunning), 4),
	}
	f := newFixture(t, pods...)
	f.c.expectations.ExpectCreations("default/idx", 0)
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	j := f.job("idx")
	if j.Status.CompletedIndexes != "0,1,3" || j.Status.Succeeded != 3 || j.Status.Active != 2 {
		t.Errorf("status = %+v", j.Status)
	}
	if n := len(f.actionsOf("patch", "pods")); n != 3 {
		t.Errorf("finalizer patches = %d, want 3", n)
	}
}

func TestFinalizerTrackingOrder(t *testing.T) {
	job := newJob("pi", 2, 2)
	f := newFixture(t, job, newPod("pi-a", job, corev1.PodSucceeded), newPod("pi-b", job, corev1.PodRunning))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	// Uncounted first, then the finalizer goes, then the counter.
	want := []string{"update jobs/status", "patch pods", "update jobs/status"}
	if got := f.actions(); !slices.Equal(got, want) {
		t.Fatalf("actions = %v, want %v", got, want)
	}
	first := f.actionsOf("update", "jobs")[0].(core.UpdateAction).GetObject().(*batchv1.Job).Status
	if first.Succeeded != 0 || !slices.Equal(first.UncountedTerminatedPods.Succeeded, []types.UID{"pi-a-uid"}) {
		t.Errorf("first status = %+v", first)
	}
	patch := string(f.actionsOf("patch", "pods")[0].(core.PatchAction).GetPatch())
	if !strings.Contains(patch, `"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"]`) {
		t.Errorf("patch = %s", patch)
	}
	j := f.job("pi")
	if j.Status.Succeeded != 1 || len(j.Status.UncountedTerminatedPods.Succeeded) != 0 || j.Status.Active != 1 {
		t.Errorf("final status = %+v", j.Status)
	}
	// A stale pod cache (finalizer still there) does not count the pod
	// twice.
	_ = f.jobIdx.Update(j)
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	if got := f.job("pi").Status.Succeeded; got != 1 {
		t.Errorf("succeeded = %d after a stale sync", got)
	}
}

func TestCompletes(t *testing.T) {
	job := newJob("pi", 2, 2)
	f := newFixture(t, job, newPod("pi-a", job, corev1.PodSucceeded), newPod("pi-b", job, corev1.PodSucceeded))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	j := f.job("pi")
	complete, met := condition(j, batchv1.JobComplete), condition(j, batchv1.JobSuccessCriteriaMet)
	if j.Status.Succeeded != 2 || complete == nil || met == nil || complete.Reason != batchv1.JobReasonCompletionsReached ||
		met.Reason != batchv1.JobReasonCompletionsReached || j.Status.CompletionTime == nil {
		t.Fatalf("status = %+v", j.Status)
	}
	if evs := f.events(); !hasEvent(evs, "Normal Completed Job completed") {
		t.Errorf("events = %v", evs)
	}
	// A finished job is left alone.
	f.refresh()
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	if a := f.actions(); len(a) != 0 {
		t.Errorf("finished job: actions %v", a)
	}
}

func TestBackoffLimitExceeded(t *testing.T) {
	job := newJob("fail", 3, 2)
	job.Spec.BackoffLimit = ptr.To[int32](1)
	job.Status.Failed = 1
	f := newFixture(t, job, newPod("fail-a", job, corev1.PodFailed), newPod("fail-b", job, corev1.PodRunning))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	j := f.job("fail")
	target := condition(j, batchv1.JobFailureTarget)
	if target == nil || target.Reason != batchv1.JobReasonBackoffLimitExceeded || condition(j, batchv1.JobFailed) != nil {
		t.Fatalf("conditions = %+v", j.Status.Conditions)
	}
	// The running pod was deleted and counted as failed; it still
	// terminates, so the job is not Failed yet.
	if dels := f.actionsOf("delete", "pods"); len(dels) != 1 || dels[0].(core.DeleteAction).GetName() != "fail-b" {
		t.Errorf("actions = %v", f.actions())
	}
	if j.Status.Failed != 3 || ptr.Deref(j.Status.Terminating, 0) != 1 {
		t.Errorf("status = %+v", j.Status)
	}
	f.refresh()
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	j = f.job("fail")
	failed := condition(j, batchv1.JobFailed)
	if failed == nil || failed.Reason != batchv1.JobReasonBackoffLimitExceeded || failed.Message != "Job has reached the specified backoff limit" {
		t.Fatalf("conditions = %+v", j.Status.Conditions)
	}
	if evs := f.events(); !hasEvent(evs, "Warning BackoffLimitExceeded Job has reached the specified backoff limit") {
		t.Errorf("events = %v", evs)
	}
}

func TestBackoffDelaysReplacement(t *testing.T) {
	job := newJob("retry", 1, 1)
	f := newFixture(t, job, newPod("retry-a", job, corev1.PodFailed))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	if n := len(f.createdPods()); n != 0 {
		t.Fatalf("created %d pods right after a failure", n)
	}
	if j := f.job("retry"); j.Status.Failed != 1 {
		t.Fatalf("failed = %d", j.Status.Failed)
	}
	f.refresh()
	f.clock.Step(9 * time.Second)
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	if n := len(f.createdPods()); n != 0 {
		t.Fatalf("created %d pods 9s after a failure", n)
	}
	f.clock.Step(2 * time.Second)
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	if n := len(f.createdPods()); n != 1 {
		t.Fatalf("created %d pods 11s after a failure, want 1", n)
	}
}

func TestRemainingBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(now)
	tests := []struct {
		failures int32
		since    time.Duration
		want     time.Duration
	}{
		{0, 0, 0},
		{1, 0, 10 * time.Second},
		{1, 4 * time.Second, 6 * time.Second},
		{2, 0, 20 * time.Second},
		{3, 0, 40 * time.Second},
		{6, 0, 320 * time.Second},
		{7, 0, 6 * time.Minute},
		{20, time.Minute, 5 * time.Minute},
		{2, time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d failures, %v ago", tt.failures, tt.since), func(t *testing.T) {
			last := now.Add(-tt.since)
			if got := remainingTimeForFailures(clk, tt.failures, &last); got != tt.want {
				t.Errorf("remaining = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestActiveDeadline(t *testing.T) {
	job := newJob("slow", 1, 1)
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](10)
	start := metav1.NewTime(now.Add(-11 * time.Second))
	job.Status.StartTime = &start
	f := newFixture(t, job, newPod("slow-a", job, corev1.PodRunning))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	j := f.job("slow")
	if c := condition(j, batchv1.JobFailureTarget); c == nil || c.Reason != batchv1.JobReasonDeadlineExceeded {
		t.Fatalf("conditions = %+v", j.Status.Conditions)
	}
	f.refresh()
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	j = f.job("slow")
	if c := condition(j, batchv1.JobFailed); c == nil || c.Reason != batchv1.JobReasonDeadlineExceeded {
		t.Fatalf("conditions = %+v", j.Status.Conditions)
	}
	if evs := f.events(); !hasEvent(evs, "Warning DeadlineExceeded Job was active longer than specified deadline") ||
		!hasEvent(evs, "Normal SuccessfulDelete Deleted pod: slow-a") {
		t.Errorf("events = %v", evs)
	}
}

func TestSuspendAndResume(t *testing.T) {
	job := newJob("s", 4, 2)
	job.Spec.Suspend = ptr.To(true)
	start := metav1.NewTime(now.Add(-time.Hour))
	job.Status.StartTime = &start
	f := newFixture(t, job, newPod("s-a", job, corev1.PodRunning), newPod("s-b", job, corev1.PodRunning))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	// Each pod loses its finalizer (not counted) and is deleted.
	if p, d := len(f.actionsOf("patch", "pods")), len(f.actionsOf("delete", "pods")); p != 2 || d != 2 {
		t.Errorf("actions = %v", f.actions())
	}
	j := f.job("s")
	if c := condition(j, batchv1.JobSuspended); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "JobSuspended" ||
		j.Status.Active != 0 || j.Status.Failed != 0 {
		t.Errorf("status = %+v", j.Status)
	}
	if evs := f.events(); !hasEvent(evs, "Normal Suspended Job suspended") {
		t.Errorf("events = %v", evs)
	}
	f.refresh()
	j.Spec.Suspend = ptr.To(false)
	if _, err := f.client.BatchV1().Jobs("default").Update(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	f.clock.Step(time.Minute)
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	j = f.job("s")
	if c := condition(j, batchv1.JobSuspended); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "JobResumed" ||
		!j.Status.StartTime.Time.Equal(f.clock.Now()) || len(f.createdPods()) != 2 {
		t.Errorf("status = %+v, actions %v", j.Status, f.actions())
	}
}

func TestPodFailurePolicy(t *testing.T) {
	rules := []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
			{Type: corev1.DisruptionTarget}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0, 42}}},
	}
	disrupted := func(p *corev1.Pod) *corev1.Pod {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}
		return p
	}
	tests := []struct {
		name       string
		pod        func(*batchv1.Job) *corev1.Pod
		wantFailed int32
		wantReason string // of FailureTarget; "" none
	}{
		{"FailJob on exit code 42", func(j *batchv1.Job) *corev1.Pod { return withExitCode(newPod("p", j, corev1.PodFailed), 42) }, 1, batchv1.JobReasonPodFailurePolicy},
		{"Ignore a disruption", func(j *batchv1.Job) *corev1.Pod {
			return disrupted(withExitCode(newPod("p", j, corev1.PodFailed), 137))
		}, 0, ""},
		{"Count exit code 3", func(j *batchv1.Job) *corev1.Pod { return withExitCode(newPod("p", j, corev1.PodFailed), 3) }, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := newJob("pfp", 1, 1)
			job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: rules}
			job.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			f := newFixture(t, job, tt.pod(job))
			if err := f.sync(job); err != nil {
				t.Fatal(err)
			}
			j := f.job("pfp")
			c := condition(j, batchv1.JobFailureTarget)
			if j.Status.Failed != tt.wantFailed || (c == nil) != (tt.wantReason == "") || (c != nil && c.Reason != tt.wantReason) {
				t.Errorf("status = %+v", j.Status)
			}
			if c != nil && c.Message != "Container main for pod default/p failed with exit code 42 matching FailJob rule at index 0" {
				t.Errorf("message = %q", c.Message)
			}
		})
	}
}

func TestPodReplacementPolicy(t *testing.T) {
	for _, policy := range []batchv1.PodReplacementPolicy{batchv1.TerminatingOrFailed, batchv1.Failed} {
		t.Run(string(policy), func(t *testing.T) {
			job := newJob("r", 1, 1)
			job.Spec.PodReplacementPolicy = ptr.To(policy)
			p := newPod("r-a", job, corev1.PodRunning)
			p.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			f := newFixture(t, job, p)
			if err := f.sync(job); err != nil {
				t.Fatal(err)
			}
			j := f.job("r")
			if ptr.Deref(j.Status.Terminating, -1) != 1 {
				t.Errorf("terminating = %v", j.Status.Terminating)
			}
			// TerminatingOrFailed counts the terminating pod as failed at
			// once (and backs off); Failed waits for it.
			wantFailed := int32(0)
			if policy == batchv1.TerminatingOrFailed {
				wantFailed = 1
			}
			if j.Status.Failed != wantFailed || len(f.createdPods()) != 0 {
				t.Errorf("failed = %d, created %d", j.Status.Failed, len(f.createdPods()))
			}
		})
	}
}

func TestBackoffLimitPerIndex(t *testing.T) {
	t.Run("failed index then the job", func(t *testing.T) {
		job := indexed(newJob("bpi", 2, 2))
		job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		job.Spec.BackoffLimit = ptr.To[int32](1 << 30)
		failed := withIndex(newPod("bpi-0", job, corev1.PodFailed), 0)
		failed.Annotations[batchv1.JobIndexFailureCountAnnotation] = "1"
		f := newFixture(t, job, failed, withIndex(newPod("bpi-1", job, corev1.PodSucceeded), 1))
		if err := f.sync(job); err != nil {
			t.Fatal(err)
		}
		j := f.job("bpi")
		if ptr.Deref(j.Status.FailedIndexes, "") != "0" || j.Status.CompletedIndexes != "1" {
			t.Errorf("status = %+v", j.Status)
		}
		if c := condition(j, batchv1.JobFailed); c == nil || c.Reason != batchv1.JobReasonFailedIndexes {
			t.Errorf("conditions = %+v", j.Status.Conditions)
		}
	})
	t.Run("retried with its failure count", func(t *testing.T) {
		job := indexed(newJob("bpi", 2, 2))
		job.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
		failed := withIndex(newPod("bpi-0", job, corev1.PodFailed), 0)
		failed.Annotations[batchv1.JobIndexFailureCountAnnotation] = "0"
		f := newFixture(t, job, failed, withIndex(newPod("bpi-1", job, corev1.PodRunning), 1))
		if err := f.sync(job); err != nil {
			t.Fatal(err)
		}
		// Per-index back-off: nothing yet, and the failed pod keeps its
		// finalizer until it is replaced.
		if n, p := len(f.createdPods()), len(f.actionsOf("patch", "pods")); n != 0 || p != 0 {
			t.Fatalf("actions = %v", f.actions())
		}
		f.clock.Step(11 * time.Second)
		if err := f.sync(job); err != nil {
			t.Fatal(err)
		}
		pods := f.createdPods()
		if len(pods) != 1 || pods[0].Annotations[batchv1.JobCompletionIndexAnnotation] != "0" ||
			pods[0].Annotations[batchv1.JobIndexFailureCountAnnotation] != "1" {
			t.Fatalf("created %+v", pods)
		}
	})
	t.Run("max failed indexes", func(t *testing.T) {
		job := indexed(newJob("bpi", 3, 3))
		job.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
		job.Spec.MaxFailedIndexes = ptr.To[int32](0)
		f := newFixture(t, job, withIndex(newPod("bpi-0", job, corev1.PodFailed), 0), withIndex(newPod("bpi-1", job, corev1.PodRunning), 1))
		if err := f.sync(job); err != nil {
			t.Fatal(err)
		}
		j := f.job("bpi")
		if c := condition(j, batchv1.JobFailureTarget); c == nil || c.Reason != batchv1.JobReasonMaxFailedIndexesExceeded {
			t.Errorf("conditions = %+v", j.Status.Conditions)
		}
	})
}

func TestSuccessPolicy(t *testing.T) {
	job := indexed(newJob("sp", 3, 3))
	job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	f := newFixture(t, job, withIndex(newPod("sp-0", job, corev1.PodSucceeded), 0),
		withIndex(newPod("sp-1", job, corev1.PodRunning), 1), withIndex(newPod("sp-2", job, corev1.PodRunning), 2))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	j := f.job("sp")
	if c := condition(j, batchv1.JobSuccessCriteriaMet); c == nil || c.Reason != batchv1.JobReasonSuccessPolicy {
		t.Fatalf("conditions = %+v", j.Status.Conditions)
	}
	if n := len(f.actionsOf("delete", "pods")); n != 2 {
		t.Errorf("deleted %d pods, want the 2 running", n)
	}
	// The others are not failures; once they are gone the job completes.
	if j.Status.Failed != 0 {
		t.Errorf("failed = %d", j.Status.Failed)
	}
	f.refresh()
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	if c := condition(f.job("sp"), batchv1.JobComplete); c == nil || c.Reason != batchv1.JobReasonSuccessPolicy {
		t.Errorf("conditions = %+v", f.job("sp").Status.Conditions)
	}
}

func TestScaleDownDeletesExtraPods(t *testing.T) {
	job := newJob("pi", 5, 1)
	f := newFixture(t, job, newPod("pi-a", job, corev1.PodRunning), newPod("pi-b", job, corev1.PodPending))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	dels := f.actionsOf("delete", "pods")
	if len(dels) != 1 || dels[0].(core.DeleteAction).GetName() != "pi-b" {
		t.Errorf("actions = %v", f.actions())
	}
	if j := f.job("pi"); j.Status.Active != 1 || j.Status.Failed != 0 {
		t.Errorf("status = %+v", j.Status)
	}
}

func TestAdoptAndRelease(t *testing.T) {
	job := newJob("pi", 2, 2)
	orphan := newPod("orphan", job, corev1.PodRunning)
	orphan.OwnerReferences, orphan.Finalizers = nil, nil
	strayed := newPod("strayed", job, corev1.PodRunning)
	strayed.Labels = map[string]string{"app": "other"}
	f := newFixture(t, job, orphan, strayed)
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	patches := map[string][]string{}
	for _, a := range f.actionsOf("patch", "pods") {
		pa := a.(core.PatchAction)
		patches[pa.GetName()] = append(patches[pa.GetName()], string(pa.GetPatch()))
	}
	// The orphan is adopted and gets the finalizer; the strayed pod is
	// released and loses it.
	if o := strings.Join(patches["orphan"], " "); !strings.Contains(o, `"controller":true`) || !strings.Contains(o, `"finalizers":["batch.kubernetes.io/job-tracking"]`) {
		t.Errorf("orphan patches = %v", patches["orphan"])
	}
	if s := strings.Join(patches["strayed"], " "); !strings.Contains(s, `"$patch":"delete"`) || !strings.Contains(s, "$deleteFromPrimitiveList/finalizers") {
		t.Errorf("strayed patches = %v", patches["strayed"])
	}
	if n := len(f.createdPods()); n != 1 {
		t.Errorf("created %d pods, want 1 beside the adopted one", n)
	}
}

func TestOrphanPodLosesFinalizer(t *testing.T) {
	job := newJob("gone", 1, 1)
	p := newPod("gone-a", job, corev1.PodSucceeded)
	f := newFixture(t, p)
	f.c.addPod(p)
	key, _ := f.c.orphanQueue.Get()
	f.c.orphanQueue.Done(key)
	if err := f.c.syncOrphanPod(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.client.CoreV1().Pods("default").Get(context.Background(), "gone-a", metav1.GetOptions{}); hasTrackingFinalizer(got) {
		t.Errorf("finalizers = %v", got.Finalizers)
	}
}

func TestBadJobsGetAnEvent(t *testing.T) {
	bad := indexed(newJob("bad", 1, 1))
	bad.Spec.Completions = nil
	unknown := newJob("unknown", 1, 1)
	unknown.Spec.CompletionMode = ptr.To(batchv1.CompletionMode("Sparse"))
	noSelector := newJob("nosel", 1, 1)
	noSelector.Spec.Selector = &metav1.LabelSelector{}
	badSelector := newJob("badsel", 1, 1)
	badSelector.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
	f := newFixture(t, bad, unknown, noSelector, badSelector)
	for _, j := range []*batchv1.Job{bad, unknown, noSelector, badSelector} {
		if err := f.sync(j); err != nil {
			t.Errorf("%s: %v", j.Name, err)
		}
	}
	evs := f.events()
	if !hasEvent(evs, "Warning InvalidJob") || !hasEvent(evs, "Warning UnknownCompletionMode") || len(evs) != 4 ||
		!hasEvent(evs[2:], "Warning InvalidSelector") || !hasEvent(evs[3:], "Warning InvalidSelector") {
		t.Errorf("events = %v", evs)
	}
	if a := f.actions(); len(a) != 0 {
		t.Errorf("actions = %v", a)
	}
}

func TestIntervals(t *testing.T) {
	tests := []struct {
		in          string
		completions int
		add         []int
		want        string
		total       int
	}{
		{"", 5, nil, "", 0},
		{"0,1", 5, []int{2}, "0-2", 3},
		{"1-3,7", 10, []int{5, 0}, "0-3,5,7", 6},
		{"1-3,x,5-9", 7, nil, "1-3,5,6", 5},
		{"3,4", 10, []int{5, 6, 8}, "3-6,8", 5},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := parseIntervals(klog.Background(), tt.in, tt.completions).with(tt.add...)
			if got.String() != tt.want || got.total() != tt.total {
				t.Errorf("got %q (%d), want %q (%d)", got.String(), got.total(), tt.want, tt.total)
			}
		})
	}
}

func TestPodEventsEnqueue(t *testing.T) {
	job := newJob("pi", 1, 1)
	f := newFixture(t, job)
	f.c.expectations.ExpectCreations("default/pi", 1)
	p := newPod("pi-a", job, corev1.PodPending)
	f.c.addPod(p)
	if !f.c.expectations.Satisfied("default/pi") {
		t.Error("creation not observed")
	}
	if f.c.queue.Len() != 1 {
		t.Errorf("queue len = %d", f.c.queue.Len())
	}
	// A finalizer removal is observed through the update.
	f.c.finalizerExpectations.expect("default/pi", []types.UID{p.UID})
	cur := p.DeepCopy()
	cur.ResourceVersion, cur.Finalizers = "2", nil
	f.c.updatePod(p, cur)
	if len(f.c.finalizerExpectations.expected("default/pi")) != 0 {
		t.Error("finalizer removal not observed")
	}
}

// A sync never starts from a cached Job older than the controller's last
// status write: it would count the pods that write counted as missing.
func TestSyncWaitsForItsLastStatusWrite(t *testing.T) {
	job := newJob("pi", 2, 2)
	job.ResourceVersion = "9"
	f := newFixture(t, job)
	f.c.statusWrites.wrote("default/pi", "10")
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	if a := f.actions(); len(a) != 0 {
		t.Fatalf("stale cache: actions %v", a)
	}
	job = job.DeepCopy()
	job.ResourceVersion = "10"
	_ = f.jobIdx.Update(job)
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	if n := len(f.createdPods()); n != 2 {
		t.Errorf("created %d pods once the write is seen, want 2", n)
	}
	// Not numbers: no check.
	f.c.statusWrites.wrote("default/pi", "abc")
	if !f.c.statusWrites.seen("default/pi", "1") {
		t.Error("a non-numeric resourceVersion blocked the sync")
	}
}

// eventAfterList is the pod cache of a sync during which an informer event
// arrives: the first listing of the job's pods returns what the cache held,
// then deliver runs, as the informer would deliver an update right after.
type eventAfterList struct {
	cache.Indexer
	jobUID  types.UID
	deliver func()
}

func (i *eventAfterList) ByIndex(name, key string) ([]any, error) {
	objs, err := i.Indexer.ByIndex(name, key)
	if name == controllerutil.ControllerUIDIndex && key == string(i.jobUID) && i.deliver != nil {
		deliver := i.deliver
		i.deliver = nil
		deliver()
	}
	return objs, err
}

// A pod counted in the last sync whose finalizer-removal event arrives
// while the next sync lists the pods: the listed pod still holds the
// finalizer, but the expectation is gone by the time the sync looked at it
// if it looked after the listing. It must not be counted again (upstream
// v1.32 reads finalizerExpectations after getPodsForJob and does). Counting
// it twice made the job think it had more successes than it had: it
// deleted running pods and completed with too few pods succeeded (the
// 1,000-completion benchmark, about one run in four).
func TestFinalizerRemovalSeenWhileListingIsNotCountedTwice(t *testing.T) {
	job := newJob("pi", 2, 2)
	job.Spec.BackoffLimit = ptr.To[int32](0)
	f := newFixture(t, job, newPod("pi-a", job, corev1.PodSucceeded), newPod("pi-b", job, corev1.PodRunning))
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	j := f.job("pi")
	if j.Status.Succeeded != 1 || j.Status.Active != 1 {
		t.Fatalf("status after the first sync = %+v", j.Status)
	}
	// The job's cache has the sync's last status write; the pod's has not
	// seen the finalizer go yet.
	_ = f.jobIdx.Update(j)
	stale, _, _ := f.podIdx.GetByKey("default/pi-a")
	if !hasTrackingFinalizer(stale.(*corev1.Pod)) {
		t.Fatal("the pod cache is not stale")
	}
	fresh, err := f.client.CoreV1().Pods("default").Get(context.Background(), "pi-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hasTrackingFinalizer(fresh) {
		t.Fatal("the first sync did not remove the finalizer")
	}
	fresh.ResourceVersion = "2"
	f.c.podIndexer = &eventAfterList{Indexer: f.podIdx, jobUID: job.UID, deliver: func() {
		_ = f.podIdx.Update(fresh)
		f.c.updatePod(stale, fresh)
	}}
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	if dels := f.actionsOf("delete", "pods"); len(dels) != 0 {
		t.Errorf("deleted %d pods of a job that runs no more than it needs; actions %v", len(dels), f.actions())
	}
	j = f.job("pi")
	if j.Status.Succeeded != 1 || len(j.Status.UncountedTerminatedPods.Succeeded) != 0 || j.Status.Active != 1 ||
		condition(j, batchv1.JobComplete) != nil || condition(j, batchv1.JobSuccessCriteriaMet) != nil {
		t.Errorf("status after the sync that saw the event = %+v", j.Status)
	}
}

// A pod that is gone when its finalizer is removed keeps its expectation
// until the cache sees it go: a cache still showing it with the finalizer
// must not count it again.
func TestFinalizerRemovalOfAGonePodKeepsItsExpectation(t *testing.T) {
	job := newJob("pi", 2, 2)
	a := newPod("pi-a", job, corev1.PodSucceeded)
	f := newFixture(t, job, a, newPod("pi-b", job, corev1.PodRunning))
	// The pod is deleted from the API server; the cache still has it.
	if err := f.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "default", "pi-a"); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(job); err != nil {
		t.Fatal(err)
	}
	j := f.job("pi")
	if j.Status.Succeeded != 1 {
		t.Fatalf("status after the first sync = %+v", j.Status)
	}
	_ = f.jobIdx.Update(j)
	if err := f.sync(j); err != nil {
		t.Fatal(err)
	}
	if got := f.job("pi").Status; got.Succeeded != 1 || len(got.UncountedTerminatedPods.Succeeded) != 0 {
		t.Errorf("status after a sync from the stale pod cache = %+v", got)
	}
	if dels := f.actionsOf("delete", "pods"); len(dels) != 0 {
		t.Errorf("actions %v", f.actions())
	}
	// Its deletion event clears the expectation.
	_ = f.podIdx.Delete(a)
	f.c.deletePod(a, true)
	if e := f.c.finalizerExpectations.expected("default/pi"); len(e) != 0 {
		t.Errorf("expectations after the deletion event: %v", e)
	}
}
