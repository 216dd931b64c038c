package iptables

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"

	"skiff.dev/proxy/pkg/servicemap"
)

// EventReasonRulesWritten is the reason of the Normal event the proxy
// records on a Service after a sync that wrote the rules of new ready
// endpoints of it: the step "rules written by each proxy" of a pod's path
// (skiffctl trace reads it; see docs/path.md).
const EventReasonRulesWritten = "RulesWritten"

// The limits of the RulesWritten events of one proxy: at most one per
// Service per sync, RulesWrittenBurst at once and RulesWrittenQPS a second
// after that; the others are dropped (and counted).
const (
	RulesWrittenQPS   = 5
	RulesWrittenBurst = 20
	// rulesWrittenQueue is how many events may wait for the API.
	rulesWrittenQueue = 100
	// maxNote is the API's limit of the message of an event with
	// eventTime.
	maxNote = 1024
)

// RulesWritten records the RulesWritten events, off the sync loop.
type RulesWritten struct {
	events  typedcorev1.EventsGetter
	node    string
	limiter *rate.Limiter
	queue   chan *corev1.Event
	dropped func()
}

// NewRulesWritten returns the recorder of the proxy of node, writing
// through events; m counts the dropped events (nil: not counted).
func NewRulesWritten(events typedcorev1.EventsGetter, node string, m *Metrics) *RulesWritten {
	r := &RulesWritten{events: events, node: node, limiter: rate.NewLimiter(RulesWrittenQPS, RulesWrittenBurst),
		queue: make(chan *corev1.Event, rulesWrittenQueue), dropped: func() {}}
	if m != nil {
		r.dropped = m.RulesWrittenDropped.Inc
	}
	return r
}

// Run writes the queued events until ctx ends.
func (r *RulesWritten) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-r.queue:
			if _, err := r.events.Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
				logger.V(2).Info("Recording a RulesWritten event failed", "service", klog.KRef(e.Namespace, e.InvolvedObject.Name), "err", err)
			}
		}
	}
}

// RunRulesWritten writes the RulesWritten events until ctx ends (at once
// when the proxier records none).
func (p *Proxier) RunRulesWritten(ctx context.Context) {
	if p.o.RulesWritten != nil {
		p.o.RulesWritten.Run(ctx)
	}
}

// newEndpoint is a ready endpoint the sync programmed for the first time.
type newEndpoint struct{ pod, addr string }

// record queues the event of svc's new endpoints, written at at, unless the
// limits are reached.
func (r *RulesWritten) record(svc *corev1.Service, eps []newEndpoint, at time.Time) {
	if r == nil || len(eps) == 0 {
		return
	}
	if !r.limiter.AllowN(at, 1) {
		r.dropped()
		return
	}
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", svc.Name, at.UnixNano()), Namespace: svc.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: svc.Namespace, Name: svc.Name,
			UID: svc.UID, ResourceVersion: svc.ResourceVersion},
		Reason: EventReasonRulesWritten, Message: rulesWrittenMessage(r.node, eps), Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "kube-proxy", Host: r.node},
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 1,
		EventTime:           metav1.NewMicroTime(at),
		ReportingController: "kube-proxy", ReportingInstance: r.node, Action: "SyncProxyRules",
	}
	select {
	case r.queue <- e:
	default:
		r.dropped()
	}
}

// rulesWrittenMessage is "Rules written on node NODE for N new
// endpoint(s): POD (IP:PORT), ... and K more", within the API's limit.
func rulesWrittenMessage(node string, eps []newEndpoint) string {
	plural := "s"
	if len(eps) == 1 {
		plural = ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Rules written on node %s for %d new endpoint%s: ", node, len(eps), plural)
	for i, ep := range eps {
		item := ep.addr
		if ep.pod != "" {
			item = ep.pod + " (" + ep.addr + ")"
		}
		if i > 0 {
			item = ", " + item
		}
		more := fmt.Sprintf(" and %d more", len(eps)-i)
		if b.Len()+len(item)+len(more) > maxNote && i > 0 {
			b.WriteString(more)
			break
		}
		b.WriteString(item)
	}
	return b.String()
}

// readyEndpoints are the ready endpoints of a Service's ports, one per
// pod (or per address, for endpoints that are not pods), "ip:port" by
// pod.
func readyEndpoints(ports []*servicemap.ServicePort, eps servicemap.EndpointsMap) map[string]string {
	out := map[string]string{}
	for _, port := range ports {
		for _, ep := range eps[port.Name] {
			if !ep.Ready {
				continue
			}
			key := ep.Pod
			if key == "" {
				key = ep.String()
			}
			if _, ok := out[key]; !ok {
				out[key] = ep.String()
			}
		}
	}
	return out
}

// newlyProgrammed compares a Service's ready endpoints with the ones of
// the last sync that wrote its rules.
func newlyProgrammed(before, now map[string]string) []newEndpoint {
	var out []newEndpoint
	for key, addr := range now {
		if old, ok := before[key]; ok && old == addr {
			continue
		}
		ep := newEndpoint{addr: addr}
		if key != addr {
			ep.pod = key
		}
		out = append(out, ep)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pod+out[i].addr < out[j].pod+out[j].addr })
	return out
}

// recordRulesWritten records, after a successful sync that refreshed the
// Services in changed, the ones with new ready endpoints; the first sync
// only learns what is programmed (the rules of the endpoints there
// already were written by the proxy's earlier life, or will be reported
// by no one).
func (p *Proxier) recordRulesWritten(changed map[types.NamespacedName]bool, at time.Time) {
	if p.o.RulesWritten == nil {
		return
	}
	first := p.programmed == nil
	if first {
		p.programmed = map[types.NamespacedName]map[string]string{}
	}
	names := make([]types.NamespacedName, 0, len(changed))
	for n := range changed {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i].String() < names[j].String() })
	for _, name := range names {
		ports := p.ports[name]
		if len(ports) == 0 {
			delete(p.programmed, name)
			continue
		}
		now := readyEndpoints(ports, p.endpoints[name])
		fresh := newlyProgrammed(p.programmed[name], now)
		p.programmed[name] = now
		if first || len(fresh) == 0 {
			continue
		}
		svc, err := p.o.Services.Services(name.Namespace).Get(name.Name)
		if err != nil {
			continue
		}
		p.o.RulesWritten.record(svc, fresh, at)
	}
}
