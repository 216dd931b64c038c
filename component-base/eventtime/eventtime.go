// Package eventtime gives the core/v1 Events a daemon records through
// client-go's record.EventBroadcaster the time to the microsecond.
//
// The record package stamps an event's firstTimestamp and lastTimestamp,
// which the API keeps to the second. Upstream's newer fields carry the same
// moment to the microsecond: eventTime (a MicroTime), with the
// reportingController, reportingInstance and action that the API server
// then requires (the core/v1 Event validation's "new event" branch). Sink
// wraps the API sink so that every event created also carries them:
// eventTime is the firstTimestamp the recorder took (its full precision,
// which the JSON of firstTimestamp drops), reportingController the source
// component (record sets it), reportingInstance the source host or, where
// the daemon has none (the scheduler, the controller-manager), the given
// instance, and action the event's reason (record's callers name no
// action). An event that the stricter rules of such events would refuse
// (a note over 1024 characters, a reportingController that is not a
// qualified name) is created as before, to the second.
//
// Updates and patches (record's aggregation of repeated events) go through
// unchanged: they change count, lastTimestamp and message only.
package eventtime

import (
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/record"
)

// Limits of the API server's validation of an Event with eventTime set.
const (
	maxInstance = 128
	maxAction   = 128
	maxReason   = 128
	maxNote     = 1024
)

// Sink returns s with the creates given eventTime, reportingInstance and
// action as the package says. instance "" is the host name.
func Sink(s record.EventSink, instance string) record.EventSink {
	if instance == "" {
		instance, _ = os.Hostname()
	}
	return &sink{EventSink: s, instance: instance}
}

type sink struct {
	record.EventSink
	instance string
}

func (s *sink) Create(e *corev1.Event) (*corev1.Event, error) {
	return s.EventSink.Create(WithMicroTime(e, s.instance))
}

// WithMicroTime returns e, or a copy of it with eventTime, reporting
// instance and action set when the API accepts them for it.
func WithMicroTime(e *corev1.Event, instance string) *corev1.Event {
	if !e.EventTime.IsZero() || e.FirstTimestamp.IsZero() {
		return e
	}
	c := *e
	if c.ReportingController == "" {
		c.ReportingController = c.Source.Component
	}
	if c.ReportingInstance == "" {
		c.ReportingInstance = c.Source.Host
	}
	if c.ReportingInstance == "" {
		c.ReportingInstance = instance
	}
	if c.Action == "" {
		c.Action = c.Reason
	}
	if c.ReportingController == "" || len(validation.IsQualifiedName(c.ReportingController)) > 0 ||
		c.ReportingInstance == "" || len(c.ReportingInstance) > maxInstance ||
		c.Action == "" || len(c.Action) > maxAction || c.Reason == "" || len(c.Reason) > maxReason || len(c.Message) > maxNote {
		return e
	}
	c.EventTime = metav1.NewMicroTime(e.FirstTimestamp.Time)
	return &c
}
