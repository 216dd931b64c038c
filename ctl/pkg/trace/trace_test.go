package trace

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

func ev(name, reason, msg string, d time.Duration, uid types.UID) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name + "." + reason + "." + d.String(), Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: name, Namespace: "default", UID: uid},
		Reason:         reason, Message: msg, FirstTimestamp: at(d), LastTimestamp: at(d), Count: 1,
		Source: corev1.EventSource{Component: "kubelet"},
	}
}

// runningPod is a pod with every record of the path, the kubelet's node
// clock 0.5 s behind the control plane's.
func runningPod() (*corev1.Pod, []corev1.Event, []corev1.Event) {
	uid := types.UID("uid-web-1")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: uid, CreationTimestamp: at(0),
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "uid-rs", Controller: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "skiff-kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{
			{Name: "web", Image: "nginx:1", ReadinessProbe: &corev1.Probe{}},
			{Name: "side", Image: "busybox:1"},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.5", StartTime: ptr.To(at(2 * time.Second)),
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(9 * time.Second)},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(time.Second)},
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at(3 * time.Second)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(9 * time.Second)},
			}},
	}
	// Deliberately out of order, as the API lists them.
	evs := []corev1.Event{
		ev("web-1", "Started", "Started container side", 8*time.Second, uid),
		ev("web-1", "Pulled", `Successfully pulled image "nginx:1" in 2.1s`, 6*time.Second, uid),
		ev("web-1", "Scheduled", "Successfully assigned default/web-1 to node-a", time.Second, uid),
		ev("web-1", "Pulling", `Pulling image "nginx:1"`, 4*time.Second, uid),
		ev("web-1", "Created", "Created container web", 6*time.Second, uid),
		ev("web-1", "Started", "Started container web", 7*time.Second, uid),
		ev("web-1", "Pulled", `Container image "busybox:1" already present on machine`, 7*time.Second, uid),
		ev("web-1", "Created", "Created container side", 8*time.Second, uid),
		// An event of an earlier pod of the same name: not this one's.
		ev("web-1", "Started", "Started container web", -time.Hour, "uid-old"),
	}
	rsEv := []corev1.Event{{
		InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: "web", UID: "uid-rs"},
		Reason:         "SuccessfulCreate", Message: "Created pod: web-1", FirstTimestamp: at(0),
		Source: corev1.EventSource{Component: "replicaset-controller"},
	}}
	return p, evs, rsEv
}

func stepNames(tr Trace) []string {
	var n []string
	for _, s := range tr.Steps {
		n = append(n, s.Name)
	}
	return n
}

func TestBuildOrdersStepsByCausality(t *testing.T) {
	p, evs, rsEv := runningPod()
	slice := discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "web"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller", Time: ptr.To(at(10 * time.Second))}}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1", UID: p.UID}}},
	}
	other := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Endpoints: []discoveryv1.Endpoint{{
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-1", UID: "uid-db"}}}}
	in := Input{Pod: p, Events: eventsOf(evs, "Pod", "web-1", p.UID), OwnerKind: "ReplicaSet", OwnerName: "web",
		OwnerCreated: t0.Add(-time.Second), OwnerEvents: rsEv, Slices: []discoveryv1.EndpointSlice{other, slice}}
	tr := Build(in)
	want := []string{"replicaset stored", "pod stored", "created by controller", "scheduled", "seen by kubelet",
		"sandbox and network ready", "image pull started", "image pulled", "container web created", "container web started",
		"image found", "container side created", "container side started", "containers ready", "ready", "in service web endpoints"}
	if got := stepNames(tr); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("steps:\n got %q\nwant %q", got, want)
	}
	if len(tr.Missing) != 0 {
		t.Errorf("missing: %q", tr.Missing)
	}
	var sum time.Duration
	for i, s := range tr.Steps {
		sum += s.Duration
		if i > 0 && s.At.Before(tr.Steps[i-1].At) {
			t.Errorf("step %s at %s before its predecessor", s.Name, s.At)
		}
	}
	if sum != tr.Total || tr.Total != 11*time.Second {
		t.Errorf("durations add to %s, total %s, want 11s", sum, tr.Total)
	}
	// The pull (4s -> 6s) and the sandbox->pull (3->4)...: the slowest is the
	// pull at 2s, first of the equal ones.
	var slowest []string
	for _, s := range tr.Steps {
		if s.Slowest {
			slowest = append(slowest, s.Name+" "+s.Duration.String())
		}
	}
	if len(slowest) != 1 || slowest[0] != "image pulled 2s" {
		t.Errorf("slowest: %q", slowest)
	}
	if s := tr.Steps[3]; !strings.Contains(s.Detail, "to node-a after 1 attempt") || s.Source != "event Scheduled" {
		t.Errorf("scheduled step: %+v", s)
	}
	if s := tr.Steps[1]; !strings.Contains(s.Detail, "created by kube-controller-manager") {
		t.Errorf("stored step: %+v", s)
	}
	if s := tr.Steps[len(tr.Steps)-2]; s.Detail != "first readiness probe passed" {
		t.Errorf("ready step: %+v", s)
	}
}

func TestBuildAllowsForClockSkew(t *testing.T) {
	p, evs, _ := runningPod()
	// The node's clock is 3 s behind: the kubelet stamps its steps before the
	// scheduler's bind.
	skewed := []corev1.Event{}
	for _, e := range evs {
		if e.Source.Component == "kubelet" && e.Reason != "Scheduled" {
			e.FirstTimestamp = metav1.NewTime(e.FirstTimestamp.Add(-3 * time.Second))
		}
		skewed = append(skewed, e)
	}
	p.Status.StartTime = ptr.To(at(-time.Second))
	tr := Build(Input{Pod: p, Events: skewed})
	var sum time.Duration
	skews := 0
	for i, s := range tr.Steps {
		sum += s.Duration
		if s.Duration < 0 {
			t.Errorf("negative duration at %s", s.Name)
		}
		if i > 0 && s.At.Before(tr.Steps[i-1].At) {
			t.Errorf("%s before its predecessor", s.Name)
		}
		if s.Skew > 0 {
			skews++
			if !s.At.Equal(s.Recorded.Add(s.Skew)) {
				t.Errorf("%s: at %s, recorded %s, skew %s", s.Name, s.At, s.Recorded, s.Skew)
			}
		}
	}
	if sum != tr.Total {
		t.Errorf("durations add to %s, total %s", sum, tr.Total)
	}
	if tr.Steps[2].Name != "seen by kubelet" || tr.Steps[2].Skew != 2*time.Second {
		t.Errorf("the kubelet's first step: %+v", tr.Steps[2])
	}
	if skews == 0 {
		t.Error("no step marked as skewed")
	}
	var out bytes.Buffer
	if err := Print(&out, []Trace{tr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "stamped 2s before the step it follows (clock skew)") {
		t.Errorf("timeline does not show the skew:\n%s", out.String())
	}
}

func TestBuildMissingSteps(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default", UID: "u", CreationTimestamp: at(0)},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	evs := []corev1.Event{
		ev("big", "FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu.", time.Second, "u"),
	}
	evs[0].Count = 4
	tr := Build(Input{Pod: p, Events: evs})
	if got := stepNames(tr); len(got) != 1 || got[0] != "pod stored" {
		t.Errorf("steps %q", got)
	}
	if len(tr.Missing) != 1 || !strings.Contains(tr.Missing[0], "4 failed attempts: 0/2 nodes are available: 2 Insufficient cpu.") {
		t.Errorf("missing %q", tr.Missing)
	}
	if tr.Total != 0 {
		t.Errorf("total %s", tr.Total)
	}
	// Bound after the failures: attempts counted, the last reason kept.
	p.Spec.NodeName = "node-b"
	evs = append(evs, ev("big", "Scheduled", "Successfully assigned default/big to node-b", 5*time.Second, "u"))
	tr = Build(Input{Pod: p, Events: evs})
	if s := tr.Steps[1]; s.Name != "scheduled" || !strings.HasPrefix(s.Detail, "to node-b after 5 attempts; earlier: 0/2 nodes") || !s.Slowest {
		t.Errorf("scheduled: %+v", s)
	}
	if len(tr.Missing) < 4 {
		t.Errorf("the kubelet's steps are not listed missing: %q", tr.Missing)
	}
}

func TestCollectReplicaSet(t *testing.T) {
	p, evs, rsEv := runningPod()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-dep", CreationTimestamp: at(-2 * time.Second)}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-rs", CreationTimestamp: at(-time.Second),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: "uid-dep", Controller: ptr.To(true)}}}}
	stranger := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default", UID: "o"}}
	cs := fake.NewSimpleClientset(dep, rs, p, stranger)
	for i := range evs {
		if _, err := cs.CoreV1().Events("default").Create(context.Background(), &evs[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rsEv[0].Name, rsEv[0].Namespace = "web.1", "default"
	if _, err := cs.CoreV1().Events("default").Create(context.Background(), &rsEv[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"rs/web", "pod/web-1", "deployment/web"} {
		ins, err := Collect(context.Background(), cs, "default", ref)
		if err != nil {
			t.Fatal(err)
		}
		if len(ins) != 1 || ins[0].Pod.Name != "web-1" || len(ins[0].Events) != 8 || len(ins[0].OwnerEvents) != 1 || !ins[0].OwnerCreated.Equal(t0.Add(-time.Second)) {
			t.Fatalf("%s: %d inputs %+v", ref, len(ins), ins)
		}
		if ins[0].Deployment != "web" || !ins[0].DeploymentCreated.Equal(t0.Add(-2*time.Second)) {
			t.Errorf("%s: deployment %q created %s", ref, ins[0].Deployment, ins[0].DeploymentCreated)
		}
		if tr := Build(ins[0]); tr.Steps[0].Name != "deployment stored" || tr.Total != 11*time.Second {
			t.Errorf("%s: first step %q, total %s", ref, tr.Steps[0].Name, tr.Total)
		}
	}
	for _, ref := range []string{"web", "svc/web", "pod/"} {
		if _, err := Collect(context.Background(), cs, "default", ref); err == nil {
			t.Errorf("%s: no error", ref)
		}
	}
}

// microEv is an event recorded with eventTime (to the microsecond), as the
// daemons record them through component-base/eventtime, its firstTimestamp
// kept to the second as the API keeps it.
func microEv(name, reason, msg string, d time.Duration, uid types.UID) corev1.Event {
	e := ev(name, reason, msg, d, uid)
	e.EventTime = metav1.NewMicroTime(t0.Add(d))
	e.FirstTimestamp = metav1.NewTime(t0.Add(d).Truncate(time.Second))
	e.LastTimestamp = e.FirstTimestamp
	e.ReportingController, e.ReportingInstance, e.Action = "kubelet", "node-a", reason
	return e
}

func rulesWrittenEv(svc, node, msg string, d time.Duration) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: svc + "." + node + "." + d.String(), Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Service", Name: svc, Namespace: "default", UID: "uid-svc"},
		Reason:         ReasonRulesWritten, Message: msg, Type: corev1.EventTypeNormal,
		EventTime:           metav1.NewMicroTime(t0.Add(d)),
		ReportingController: "kube-proxy", ReportingInstance: node, Action: "SyncProxyRules",
		Source: corev1.EventSource{Component: "kube-proxy", Host: node},
	}
}

// A pod started within two seconds: the events carry eventTime, so the
// steps between them have their sub-second durations; the records kept to
// the second (conditions, startTime) sit in their second without being
// called skewed; the durations still add up to the whole.
func TestBuildSubSecondSteps(t *testing.T) {
	p, _, rsEv := runningPod()
	ms := time.Millisecond
	p.Status.StartTime = ptr.To(at(0))
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(0)},
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at(0)},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(time.Second)},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(time.Second)},
	}
	p.Spec.Containers = p.Spec.Containers[:1]
	evs := []corev1.Event{
		microEv("web-1", "Scheduled", "Successfully assigned default/web-1 to node-a", 20*ms, p.UID),
		microEv("web-1", "Pulling", `Pulling image "nginx:1"`, 210*ms, p.UID),
		microEv("web-1", "Pulled", `Successfully pulled image "nginx:1" in 390ms`, 600*ms, p.UID),
		microEv("web-1", "Created", "Created container web", 640*ms, p.UID),
		microEv("web-1", "Started", "Started container web", 700*ms, p.UID),
	}
	rsEv[0].EventTime = metav1.NewMicroTime(t0.Add(12 * ms))
	rsEv[0].ReportingController = "replicaset-controller"
	tr := Build(Input{Pod: p, Events: evs, OwnerKind: "ReplicaSet", OwnerName: "web", OwnerEvents: rsEv})
	byName := map[string]Step{}
	var sum time.Duration
	for _, s := range tr.Steps {
		byName[s.Name] = s
		sum += s.Duration
		if s.Skew != 0 {
			t.Errorf("%s marked skewed by %s: its record is kept to the %s", s.Name, s.Skew, s.Precision)
		}
	}
	if sum != tr.Total || tr.Total != time.Second {
		t.Errorf("durations add to %s, total %s; want 1s", sum, tr.Total)
	}
	for name, want := range map[string]time.Duration{
		"created by controller": 12 * ms, "scheduled": 8 * ms, "image pull started": 190 * ms,
		"image pulled": 390 * ms, "container web created": 40 * ms, "container web started": 60 * ms,
		"containers ready": 300 * ms,
	} {
		if got := byName[name].Duration; got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if s := byName["seen by kubelet"]; s.Precision != Second || !s.At.Equal(t0.Add(20*ms)) || s.Duration != 0 {
		t.Errorf("the kubelet's startTime (to the second, in the scheduled step's second): %+v", s)
	}
	if s := byName["image pulled"]; s.Precision != Microsecond || !s.Slowest {
		t.Errorf("image pulled: %+v", s)
	}
	var out bytes.Buffer
	if err := Print(&out, []Trace{tr}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"390ms <- slowest", "~300ms", "~: one end of the step is a record the API keeps to the second"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("timeline lacks %q:\n%s", want, out.String())
		}
	}
	// A microsecond record more than its precision before its predecessor
	// is another clock: skewed.
	evs[4].EventTime = metav1.NewMicroTime(t0.Add(630 * ms))
	tr = Build(Input{Pod: p, Events: evs})
	for _, s := range tr.Steps {
		if s.Name == "container web started" && s.Skew != 10*ms {
			t.Errorf("started 10ms before created: skew %s", s.Skew)
		}
	}
}

// Each proxy's RulesWritten event on the pod's Service is a step of its
// own, per node, after the endpoints step; events naming another pod, the
// pod at an earlier address or another Service are not.
func TestBuildProxySteps(t *testing.T) {
	p, evs, _ := runningPod()
	evs = eventsOf(evs, "Pod", p.Name, p.UID)
	slice := discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "web"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Service", Name: "web", UID: "uid-svc"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller", Time: ptr.To(at(10 * time.Second))}}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1", UID: p.UID}}},
	}
	svcEvs := []corev1.Event{
		rulesWrittenEv("web", "node-b", "Rules written on node node-b for 2 new endpoints: web-0 (10.0.0.4:8080), web-1 (10.0.0.5:8080)", 10*time.Second+450*time.Millisecond),
		rulesWrittenEv("web", "node-a", "Rules written on node node-a for 1 new endpoint: web-1 (10.0.0.5:8080)", 10*time.Second+120*time.Millisecond),
		// A later sync of node-a: not its first record.
		rulesWrittenEv("web", "node-a", "Rules written on node node-a for 1 new endpoint: web-1 (10.0.0.5:8080)", 20*time.Second),
		// Not this pod: another pod, the same name at an old address, another Service.
		rulesWrittenEv("web", "node-c", "Rules written on node node-c for 1 new endpoint: web-10 (10.0.0.9:8080)", 10*time.Second+200*time.Millisecond),
		rulesWrittenEv("web", "node-d", "Rules written on node node-d for 1 new endpoint: web-1 (10.0.0.99:8080)", 10*time.Second+200*time.Millisecond),
		rulesWrittenEv("db", "node-e", "Rules written on node node-e for 1 new endpoint: web-1 (10.0.0.5:8080)", 10*time.Second+200*time.Millisecond),
	}
	tr := Build(Input{Pod: p, Events: evs, Slices: []discoveryv1.EndpointSlice{slice}, ServiceEvents: svcEvs})
	n := len(tr.Steps)
	got := stepNames(tr)[n-3:]
	if strings.Join(got, ",") != "in service web endpoints,rules written on node-a,rules written on node-b" {
		t.Fatalf("last steps %q", stepNames(tr))
	}
	a, b := tr.Steps[n-2], tr.Steps[n-1]
	if a.Duration != 120*time.Millisecond || b.Duration != 330*time.Millisecond || a.Component != "kube-proxy" ||
		a.Precision != Microsecond || a.Source != "event RulesWritten on Service web" || b.Detail != "node node-b" {
		t.Errorf("proxy steps: %+v\n%+v", a, b)
	}
	// Another pod added later rewrote the slice (at 30s): the endpoints
	// step is bounded by the first proxy's record of this pod.
	slice.ManagedFields[0].Time = ptr.To(at(30 * time.Second))
	tr = Build(Input{Pod: p, Events: evs, Slices: []discoveryv1.EndpointSlice{slice}, ServiceEvents: svcEvs})
	n = len(tr.Steps)
	if s := tr.Steps[n-3]; !s.Recorded.Equal(t0.Add(10*time.Second+120*time.Millisecond)) || !strings.Contains(s.Source, "bounded by the first proxy's record") || s.Skew != 0 {
		t.Errorf("endpoints step: %+v", s)
	}
	for _, s := range tr.Steps {
		if s.Skew != 0 && s.Name != "seen by kubelet" {
			t.Errorf("%s skewed", s.Name)
		}
	}
	// "and K more": the pods before it are named.
	p.Status.PodIP = "10.0.0.5"
	if !namesPod("Rules written on node n for 30 new endpoints: a (10.0.0.1:80), web-1 (10.0.0.5:80) and 28 more", p) ||
		namesPod("Rules written on node n for 30 new endpoints: a (10.0.0.1:80) and 29 more", p) {
		t.Error("namesPod")
	}
}

// skiffctl trace pod/NAME reads the events of the pod's Services too.
func TestCollectServiceEvents(t *testing.T) {
	p, evs, _ := runningPod()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "web"},
			CreationTimestamp: at(10 * time.Second)},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1", UID: p.UID}}},
	}
	cs := fake.NewSimpleClientset(p, slice)
	all := append(evs,
		rulesWrittenEv("web", "node-a", "Rules written on node node-a for 1 new endpoint: web-1 (10.0.0.5:8080)", 10*time.Second),
		rulesWrittenEv("db", "node-a", "Rules written on node node-a for 1 new endpoint: db-1 (10.0.0.7:8080)", 10*time.Second))
	for i := range all {
		if _, err := cs.CoreV1().Events("default").Create(context.Background(), &all[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ins, err := Collect(context.Background(), cs, "default", "pod/web-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 1 || len(ins[0].ServiceEvents) != 1 || ins[0].ServiceEvents[0].InvolvedObject.Name != "web" {
		t.Fatalf("service events: %+v", ins[0].ServiceEvents)
	}
	tr := Build(ins[0])
	if last := tr.Steps[len(tr.Steps)-1]; last.Name != "rules written on node-a" {
		t.Errorf("last step %q", last.Name)
	}
}

// The slowest step is the one that surely took longest: a step right after
// a record kept to the second may look long only because that record lost
// its fraction of a second.
func TestSlowestAllowsForPrecision(t *testing.T) {
	ms := time.Millisecond
	steps := settle([]Step{
		{Name: "pod stored", Recorded: t0, Precision: Second},
		// 995ms after a record that may be 14.999: at least 0s.
		{Name: "created by controller", Recorded: t0.Add(995 * ms), Precision: Microsecond},
		{Name: "container started", Recorded: t0.Add(1110 * ms), Precision: Microsecond},
	})
	if !steps[2].Slowest || steps[1].Slowest {
		t.Errorf("slowest: %+v", steps)
	}
	// Only records kept to the second: the longest duration.
	steps = settle([]Step{
		{Name: "a", Recorded: t0, Precision: Second},
		{Name: "b", Recorded: t0.Add(time.Second), Precision: Second},
		{Name: "c", Recorded: t0.Add(3 * time.Second), Precision: Second},
		{Name: "d", Recorded: t0.Add(4 * time.Second), Precision: Second},
	})
	if !steps[2].Slowest {
		t.Errorf("slowest: %+v", steps)
	}
}
