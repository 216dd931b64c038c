package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"skiff.dev/component-base/eventtime"
)

// TestEventsWithMicroTime: events recorded as the daemons record them
// (client-go's EventBroadcaster through component-base/eventtime's sink)
// are accepted with eventTime to the microsecond, reportingInstance and
// action; a repeated event is still aggregated (count 2, a patch); kubectl
// get events, -o wide and kubectl events show them as core/v1 events.
func TestEventsWithMicroTime(t *testing.T) {
	ts := start(t, nil)
	b := record.NewBroadcaster()
	b.StartRecordingToSink(eventtime.Sink(&typedcorev1.EventSinkImpl{Interface: ts.Client.CoreV1().Events("")}, "sched-host"))
	defer b.Shutdown()
	kubelet := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: "node-1"})
	scheduler := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "default-scheduler"})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "u1"}}
	scheduler.Eventf(pod, corev1.EventTypeNormal, "Scheduled", "Successfully assigned default/web-1 to node-1")
	for range 2 {
		kubelet.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Successfully pulled image %q in 1s", "busybox")
	}
	var events []corev1.Event
	eventually(t, "the Scheduled event and the Pulled event counted twice", func() error {
		l, err := ts.Client.CoreV1().Events("default").List(ctx(t), metav1.ListOptions{})
		if err != nil {
			return err
		}
		events = l.Items
		for _, e := range events {
			if e.Reason == "Pulled" && e.Count == 2 && len(events) == 2 {
				return nil
			}
		}
		return fmt.Errorf("%d events: %+v", len(events), events)
	})
	want := map[string]string{"Scheduled": "default-scheduler/sched-host", "Pulled": "kubelet/node-1"}
	for _, e := range events {
		if e.EventTime.IsZero() || !e.EventTime.Time.Truncate(time.Second).Equal(e.FirstTimestamp.Time) ||
			e.ReportingController+"/"+e.ReportingInstance != want[e.Reason] || e.Action != e.Reason {
			t.Errorf("%s: eventTime %s firstTimestamp %s reporting %s/%s action %q", e.Reason, e.EventTime.Format(time.RFC3339Nano),
				e.FirstTimestamp.Format(time.RFC3339Nano), e.ReportingController, e.ReportingInstance, e.Action)
		}
	}
	for _, args := range [][]string{{"get", "events"}, {"get", "events", "-o", "wide"}, {"events"}} {
		out := mustKubectl(t, ctx(t), ts, args...)
		if strings.Contains(out, "<unknown>") || !strings.Contains(out, "Successfully pulled image") || !strings.Contains(out, "Successfully assigned") {
			t.Errorf("kubectl %s:\n%s", strings.Join(args, " "), out)
		}
	}
	if out := mustKubectl(t, ctx(t), ts, "events"); !strings.Contains(out, "(x2 over") {
		t.Errorf("kubectl events does not show the count:\n%s", out)
	}
}
