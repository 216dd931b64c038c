package eventtime

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
)

type fakeSink struct{ created, patched chan *corev1.Event }

func (f *fakeSink) Create(e *corev1.Event) (*corev1.Event, error) { f.created <- e; return e, nil }
func (f *fakeSink) Update(e *corev1.Event) (*corev1.Event, error) { return e, nil }
func (f *fakeSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	f.patched <- e
	return e, nil
}

// A real record.EventBroadcaster with the wrapped sink: the event created
// carries the recorder's time to the microsecond, the source host (or the
// daemon's instance) and its reason as action; the fractional second the
// JSON of firstTimestamp would lose is in eventTime.
func TestBroadcasterEventsCarryMicroTime(t *testing.T) {
	for _, tc := range []struct {
		source         corev1.EventSource
		instance, want string
	}{
		{corev1.EventSource{Component: "kubelet", Host: "node-1"}, "", "node-1"},
		{corev1.EventSource{Component: "default-scheduler"}, "sched-host", "sched-host"},
	} {
		f := &fakeSink{created: make(chan *corev1.Event, 1), patched: make(chan *corev1.Event, 1)}
		b := record.NewBroadcaster(record.WithSleepDuration(time.Millisecond))
		b.StartRecordingToSink(Sink(f, tc.instance))
		r := b.NewRecorder(scheme.Scheme, tc.source)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "u"}}
		// The recorder's clock is the real one: take the time around it.
		before := time.Now()
		r.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Successfully pulled image %q", "busybox")
		var e *corev1.Event
		select {
		case e = <-f.created:
		case <-time.After(10 * time.Second):
			t.Fatal("no event created")
		}
		b.Shutdown()
		if e.EventTime.IsZero() || e.EventTime.Before(&metav1.MicroTime{Time: before.Truncate(time.Microsecond)}) ||
			!e.EventTime.Time.Equal(e.FirstTimestamp.Time) {
			t.Errorf("eventTime %v, firstTimestamp %v, recorded after %v", e.EventTime, e.FirstTimestamp, before)
		}
		if e.ReportingController != tc.source.Component || e.ReportingInstance != tc.want || e.Action != "Pulled" {
			t.Errorf("reporting %q/%q action %q", e.ReportingController, e.ReportingInstance, e.Action)
		}
		// Through JSON, as the API stores it: microseconds kept.
		data, err := runtime.Encode(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion), e)
		if err != nil {
			t.Fatal(err)
		}
		var back corev1.Event
		if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(), data, &back); err != nil {
			t.Fatal(err)
		}
		if !back.EventTime.Time.Equal(e.EventTime.Time.Truncate(time.Microsecond)) || back.FirstTimestamp.Nanosecond() != 0 {
			t.Errorf("after JSON: eventTime %v firstTimestamp %v", back.EventTime.Format(time.RFC3339Nano), back.FirstTimestamp.Format(time.RFC3339Nano))
		}
	}
}

// Events the stricter rules would refuse are created as before.
func TestWithMicroTimeLeavesWhatTheAPIWouldRefuse(t *testing.T) {
	ts := metav1.NewTime(time.Date(2026, 11, 27, 5, 0, 0, 500_000_000, time.UTC))
	base := corev1.Event{Reason: "Failed", Message: "x", FirstTimestamp: ts, Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}}
	ok := WithMicroTime(&base, "")
	if ok.EventTime.IsZero() || ok.ReportingController != "kubelet" || ok.ReportingInstance != "node-1" || ok.Action != "Failed" {
		t.Errorf("plain event: %+v", ok)
	}
	if !base.EventTime.IsZero() {
		t.Error("the recorder's event changed in place")
	}
	long := base
	long.Message = strings.Repeat("m", 1025)
	badController := base
	badController.Source.Component = "not a name!"
	noInstance := base
	noInstance.Source.Host = ""
	noTime := base
	noTime.FirstTimestamp = metav1.Time{}
	for name, e := range map[string]corev1.Event{"long note": long, "bad controller": badController, "no instance": noInstance, "no time": noTime} {
		if got := WithMicroTime(&e, ""); got != &e || !got.EventTime.IsZero() {
			t.Errorf("%s: eventTime set: %+v", name, got)
		}
	}
	set := base
	set.EventTime = metav1.NewMicroTime(time.Unix(1, 0))
	if got := WithMicroTime(&set, "i"); got != &set {
		t.Error("an event with its own eventTime was changed")
	}
}
