package trace

import (
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Step is one step of a pod's path.
type Step struct {
	// Name says what happened, e.g. "scheduled" or "container web started".
	Name string `json:"name"`
	// Component is the daemon that recorded the step.
	Component string `json:"component"`
	// Source is where the step was read from (an event, a condition, a field).
	Source string `json:"source"`
	// Detail adds what the record says (node, attempts, image, IP...).
	Detail string `json:"detail,omitempty"`
	// Recorded is the time as the component's clock stamped it.
	Recorded time.Time `json:"recorded"`
	// Precision is how finely the record keeps its time: a second for
	// creationTimestamp, conditions and core/v1 events' firstTimestamp
	// (the true time is up to a second later), a microsecond for an
	// event's eventTime.
	Precision time.Duration `json:"precision"`
	// At is Recorded, or the previous step's At when the component's clock
	// put the step before the step it follows (Skew is then the difference).
	At time.Time `json:"at"`
	// Skew is how far before its predecessor the step was stamped, beyond
	// what the record's precision explains.
	Skew time.Duration `json:"skew,omitempty"`
	// Offset is At minus the first step's At.
	Offset time.Duration `json:"offset"`
	// Duration is At minus the previous step's At.
	Duration time.Duration `json:"duration"`
	// Slowest marks the step that surely took longest: the longest
	// Duration once the records' precision is allowed for (a step after a
	// record kept to the second may have started up to a second later).
	Slowest bool `json:"slowest,omitempty"`
}

// Trace is the path of one pod.
type Trace struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	UID       string `json:"uid"`
	Node      string `json:"node,omitempty"`
	Phase     string `json:"phase"`
	Steps     []Step `json:"steps"`
	// Total is the last step's At minus the first's; the Durations add up to it.
	Total time.Duration `json:"total"`
	// Missing names the steps of the path with no record yet, with the reason.
	Missing []string `json:"missing,omitempty"`
}

// Input is what the API holds about one pod.
type Input struct {
	Pod *corev1.Pod
	// Events are the pod's events, in any order.
	Events []corev1.Event
	// Owner is the pod's controller (a ReplicaSet, Job...) when it has one,
	// and OwnerEvents that object's events.
	OwnerKind    string
	OwnerName    string
	OwnerCreated time.Time
	OwnerEvents  []corev1.Event
	// Deployment is the ReplicaSet's Deployment, when it has one.
	Deployment        string
	DeploymentCreated time.Time
	// Slices are EndpointSlices of the pod's namespace.
	Slices []discoveryv1.EndpointSlice
	// ServiceEvents are the events about the Services whose slices list
	// the pod (the proxies' RulesWritten), in any order.
	ServiceEvents []corev1.Event
}

// The precisions of the API's times.
const (
	Second      = time.Second
	Microsecond = time.Microsecond
)

// ReasonRulesWritten is the reason of the event a proxy (skiff-proxy)
// records on a Service after a sync that wrote the rules of new ready
// endpoints; its reportingInstance is the node, its message names the
// pods: "Rules written on node NODE for N new endpoint(s): POD (IP:PORT),
// POD (IP:PORT) and K more".
const ReasonRulesWritten = "RulesWritten"

// EventTime is when the event first happened, by the reporter's clock.
func EventTime(e corev1.Event) time.Time {
	t, _ := eventTime(e)
	return t
}

// eventTime is EventTime with the precision of the field it came from:
// eventTime (a MicroTime) to the microsecond, the others to the second.
func eventTime(e corev1.Event) (time.Time, time.Duration) {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time, Microsecond
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time, Second
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time, Second
	}
	return e.CreationTimestamp.Time, Second
}

// sortEvents orders events by time, oldest first (the API lists them in
// any order).
func sortEvents(evs []corev1.Event) []corev1.Event {
	out := append([]corev1.Event(nil), evs...)
	sort.SliceStable(out, func(i, j int) bool { return EventTime(out[i]).Before(EventTime(out[j])) })
	return out
}

func reporter(e corev1.Event, def string) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	if e.Source.Component != "" {
		return e.Source.Component
	}
	return def
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

var (
	imageRE     = regexp.MustCompile(`image "([^"]+)"`)
	containerRE = regexp.MustCompile(`[Cc]ontainer:? ([a-z0-9]([-a-z0-9]*[a-z0-9])?)$`)
)

// Build assembles the trace of in.Pod.
func Build(in Input) Trace {
	p := in.Pod
	tr := Trace{Namespace: p.Namespace, Pod: p.Name, UID: string(p.UID), Node: p.Spec.NodeName, Phase: string(p.Status.Phase)}
	evs := sortEvents(in.Events)
	first := func(reason string, match func(corev1.Event) bool) *corev1.Event {
		for i := range evs {
			if evs[i].Reason == reason && (match == nil || match(evs[i])) {
				return &evs[i]
			}
		}
		return nil
	}
	var steps []Step
	add := func(s Step) {
		if s.Precision == 0 {
			s.Precision = Second
		}
		steps = append(steps, s)
	}
	missing := func(format string, a ...any) { tr.Missing = append(tr.Missing, fmt.Sprintf(format, a...)) }

	// 1. The Deployment and the owner, stored before the pods.
	if in.Deployment != "" && !in.DeploymentCreated.IsZero() {
		add(Step{Name: "deployment stored", Component: "apiserver", Source: "creationTimestamp",
			Detail: "Deployment/" + in.Deployment, Recorded: in.DeploymentCreated})
	}
	if in.OwnerKind != "" && !in.OwnerCreated.IsZero() {
		add(Step{Name: strings.ToLower(in.OwnerKind) + " stored", Component: "apiserver",
			Source: "creationTimestamp", Detail: in.OwnerKind + "/" + in.OwnerName, Recorded: in.OwnerCreated})
	}
	// 2. The pod received, admitted and stored.
	detail := "uid " + string(p.UID)
	// The creator's entry: the first not of a subresource (the kubelet's
	// status writes are).
	for _, m := range p.ManagedFields {
		if m.Subresource == "" && m.Manager != "" {
			detail = "created by " + m.Manager + ", " + detail
			break
		}
	}
	add(Step{Name: "pod stored", Component: "apiserver", Source: "creationTimestamp", Detail: detail, Recorded: p.CreationTimestamp.Time})
	// 3. The owner's controller reports the create.
	if in.OwnerKind != "" {
		for _, e := range sortEvents(in.OwnerEvents) {
			if e.Reason == "SuccessfulCreate" && strings.HasSuffix(e.Message, " "+p.Name) {
				add(Step{Name: "created by controller", Component: reporter(e, "controller-manager"),
					Source: "event SuccessfulCreate", Detail: in.OwnerKind + "/" + in.OwnerName + ": " + e.Message}.stamped(e))
				break
			}
		}
	}
	// 4. Bound by the scheduler.
	failed := 0
	var lastFailed *corev1.Event
	for i := range evs {
		if evs[i].Reason == "FailedScheduling" {
			c := int(evs[i].Count)
			if c < 1 {
				c = 1
			}
			failed += c
			lastFailed = &evs[i]
		}
	}
	sched := podCondition(p, corev1.PodScheduled)
	if p.Spec.NodeName != "" {
		s := Step{Name: "scheduled", Component: "scheduler", Detail: "to " + p.Spec.NodeName}
		s.Detail += fmt.Sprintf(" after %d attempt%s", failed+1, plural(failed+1))
		if lastFailed != nil {
			s.Detail += "; earlier: " + lastFailed.Message
		}
		if e := first("Scheduled", nil); e != nil {
			s.Source, s.Component = "event Scheduled", reporter(*e, "scheduler")
			s = s.stamped(*e)
		} else if sched != nil && sched.Status == corev1.ConditionTrue {
			s.Source, s.Recorded = "condition PodScheduled", sched.LastTransitionTime.Time
		}
		if !s.Recorded.IsZero() {
			add(s)
		} else {
			missing("scheduled: bound to %s with no Scheduled event or PodScheduled condition", p.Spec.NodeName)
		}
	} else {
		why := "not bound to a node yet"
		if lastFailed != nil {
			why += fmt.Sprintf(" (%d failed attempt%s: %s)", failed, plural(failed), lastFailed.Message)
		}
		missing("scheduled: %s", why)
	}
	// 5. The kubelet: seen, sandbox, images, containers, probes.
	if p.Status.StartTime != nil {
		add(Step{Name: "seen by kubelet", Component: "kubelet", Source: "status.startTime", Detail: p.Spec.NodeName, Recorded: p.Status.StartTime.Time})
	} else if p.Spec.NodeName != "" {
		missing("seen by kubelet: no status.startTime from %s", p.Spec.NodeName)
	}
	if c := podCondition(p, corev1.PodReadyToStartContainers); c != nil && c.Status == corev1.ConditionTrue {
		d := "pod IP " + p.Status.PodIP
		if p.Spec.HostNetwork {
			d = "host network"
		}
		add(Step{Name: "sandbox and network ready", Component: "kubelet", Source: "condition PodReadyToStartContainers", Detail: d, Recorded: c.LastTransitionTime.Time})
	} else if p.Spec.NodeName != "" {
		missing("sandbox and network ready: no PodReadyToStartContainers=True")
	}
	containers := append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...)
	pulledImages := map[string]bool{}
	for _, c := range containers {
		img := c.Image
		if !pulledImages[img] {
			pulledImages[img] = true
			byImage := func(e corev1.Event) bool {
				m := imageRE.FindStringSubmatch(e.Message)
				return m != nil && m[1] == img
			}
			if e := first("Pulling", byImage); e != nil {
				add(Step{Name: "image pull started", Component: reporter(*e, "kubelet"), Source: "event Pulling", Detail: img}.stamped(*e))
			}
			if e := first("Pulled", byImage); e != nil {
				name := "image pulled"
				if strings.Contains(e.Message, "already present") {
					name = "image found"
				}
				add(Step{Name: name, Component: reporter(*e, "kubelet"), Source: "event Pulled", Detail: e.Message}.stamped(*e))
			} else if p.Spec.NodeName != "" {
				missing("image %s: no Pulled event", img)
			}
		}
		byContainer := func(e corev1.Event) bool {
			m := containerRE.FindStringSubmatch(e.Message)
			return m != nil && m[1] == c.Name
		}
		for _, r := range []string{"Created", "Started"} {
			if e := first(r, byContainer); e != nil {
				add(Step{Name: "container " + c.Name + " " + strings.ToLower(r), Component: reporter(*e, "kubelet"), Source: "event " + r}.stamped(*e))
			} else if p.Spec.NodeName != "" {
				missing("container %s %s: no %s event", c.Name, strings.ToLower(r), r)
			}
		}
	}
	for _, ct := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		c := podCondition(p, ct)
		if c != nil && c.Status == corev1.ConditionTrue {
			d := ""
			if ct == corev1.PodReady && hasReadinessProbe(p) {
				d = "first readiness probe passed"
			}
			add(Step{Name: map[corev1.PodConditionType]string{corev1.ContainersReady: "containers ready", corev1.PodReady: "ready"}[ct],
				Component: "kubelet", Source: "condition " + string(ct), Detail: d, Recorded: c.LastTransitionTime.Time})
		} else if p.Spec.NodeName != "" {
			missing("%s: condition not True", ct)
		}
	}
	// 6. Added to a Service's endpoints by the endpointslice controller,
	// then 7. the rules written by each proxy (its RulesWritten event on
	// the Service naming the pod), per node.
	var proxySteps []Step
	for _, s := range in.Slices {
		for _, ep := range s.Endpoints {
			if ep.TargetRef == nil || ep.TargetRef.UID != p.UID {
				continue
			}
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			svc := s.Labels[discoveryv1.LabelServiceName]
			t, src := sliceWriteTime(s)
			if t.IsZero() {
				continue
			}
			written := rulesWritten(p, svc, serviceUID(s), in.ServiceEvents)
			step := Step{Name: "in service " + svc + " endpoints", Component: "endpointslice-controller", Source: src,
				Detail: "EndpointSlice " + s.Name, Recorded: t}
			// The slice may have been written again since (another pod
			// added): its write time is then after the first proxy's
			// record of this pod, which bounds the step instead.
			if len(written) > 0 && written[0].Recorded.Before(t) {
				step.Recorded, step.Precision = written[0].Recorded, written[0].Precision
				step.Source = src + ", bounded by the first proxy's record"
				step.Detail += fmt.Sprintf("; slice last written at %s", t.UTC().Format(time.RFC3339))
			}
			add(step)
			proxySteps = append(proxySteps, written...)
		}
	}
	sort.SliceStable(proxySteps, func(i, j int) bool { return proxySteps[i].Recorded.Before(proxySteps[j].Recorded) })
	for _, s := range proxySteps {
		add(s)
	}
	tr.Steps = settle(steps)
	if n := len(tr.Steps); n > 0 {
		tr.Total = tr.Steps[n-1].At.Sub(tr.Steps[0].At)
	}
	return tr
}

// stamped gives s the time and precision of the event it was read from.
func (s Step) stamped(e corev1.Event) Step {
	s.Recorded, s.Precision = eventTime(e)
	return s
}

// serviceUID is the UID of the Service that owns the slice ("" when none).
func serviceUID(s discoveryv1.EndpointSlice) types.UID {
	for _, o := range s.OwnerReferences {
		if o.Kind == "Service" {
			return o.UID
		}
	}
	return ""
}

// rulesWritten is the first RulesWritten event of each proxy (node) on
// Service svc that names pod p at its current address, as steps in time
// order.
func rulesWritten(p *corev1.Pod, svc string, uid types.UID, evs []corev1.Event) []Step {
	first := map[string]Step{}
	for _, e := range sortEvents(evs) {
		o := e.InvolvedObject
		if e.Reason != ReasonRulesWritten || o.Kind != "Service" || o.Name != svc || (uid != "" && o.UID != "" && o.UID != uid) {
			continue
		}
		node := e.ReportingInstance
		if node == "" {
			node = e.Source.Host
		}
		if _, seen := first[node]; seen || !namesPod(e.Message, p) {
			continue
		}
		first[node] = Step{Name: "rules written on " + node, Component: reporter(e, "kube-proxy"),
			Source: "event " + ReasonRulesWritten + " on Service " + svc, Detail: "node " + node}.stamped(e)
	}
	out := make([]Step, 0, len(first))
	for _, s := range first {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Recorded.Before(out[j].Recorded) || out[i].Recorded.Equal(out[j].Recorded) && out[i].Name < out[j].Name
	})
	return out
}

// namesPod reports whether a RulesWritten message ("...: POD (IP:PORT),
// POD (IP:PORT) and K more") lists pod p at one of its addresses.
func namesPod(msg string, p *corev1.Pod) bool {
	_, list, ok := strings.Cut(msg, ": ")
	if !ok {
		return false
	}
	if i := strings.LastIndex(list, " and "); i >= 0 && strings.HasSuffix(list, " more") {
		list = list[:i]
	}
	for _, item := range strings.Split(list, ", ") {
		name, addr, ok := strings.Cut(item, " (")
		if !ok || name != p.Name {
			continue
		}
		host, _, err := net.SplitHostPort(strings.TrimSuffix(addr, ")"))
		if err != nil {
			continue
		}
		if host == p.Status.PodIP || len(p.Status.PodIPs) == 0 && p.Status.PodIP == "" {
			return true
		}
		for _, ip := range p.Status.PodIPs {
			if ip.IP == host {
				return true
			}
		}
	}
	return false
}

// sliceWriteTime is when the endpointslice controller last wrote the slice
// (its managedFields entry), or its creation.
func sliceWriteTime(s discoveryv1.EndpointSlice) (time.Time, string) {
	var t time.Time
	for _, m := range s.ManagedFields {
		if m.Time != nil && m.Time.After(t) {
			t = m.Time.Time
		}
	}
	if !t.IsZero() {
		return t, "EndpointSlice managedFields"
	}
	return s.CreationTimestamp.Time, "EndpointSlice creationTimestamp"
}

func hasReadinessProbe(p *corev1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if c.ReadinessProbe != nil {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// settle gives each step (in causal order) its At, Duration and Offset: a
// step stamped before its predecessor is moved to the predecessor's time,
// so the durations add up. When the record's precision explains it (a
// time kept to the second is up to a second early) that is all; otherwise
// the difference is another machine's clock, kept as the step's Skew.
func settle(steps []Step) []Step {
	if len(steps) == 0 {
		return steps
	}
	byMin, byDur, most := 0, 0, time.Duration(0)
	for i := range steps {
		s := &steps[i]
		s.At = s.Recorded
		if i > 0 {
			prev := steps[i-1].At
			if s.At.Before(prev) {
				if behind := prev.Sub(s.At); behind >= s.Precision {
					s.Skew = behind
				}
				s.At = prev
			}
			s.Duration = s.At.Sub(prev)
			s.Offset = s.At.Sub(steps[0].At)
			if m := minDuration(steps[i-1], *s); m > most {
				byMin, most = i, m
			}
			if s.Duration > steps[byDur].Duration {
				byDur = i
			}
		}
	}
	slowest := byMin
	if most == 0 {
		slowest = byDur
	}
	if slowest > 0 {
		steps[slowest].Slowest = true
	}
	return steps
}

// minDuration is the least time step s can have taken after prev, given
// their records' precision: a time kept to the second is up to a second
// later than recorded.
func minDuration(prev, s Step) time.Duration {
	latestPrev := prev.At
	if prev.Precision > time.Microsecond {
		latestPrev = prev.Recorded.Add(prev.Precision - time.Microsecond)
		if prev.At.After(latestPrev) {
			latestPrev = prev.At
		}
	}
	return max(s.At.Sub(latestPrev), 0)
}
