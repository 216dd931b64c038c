package integration

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Field selectors of Events in both groups, with the names each group has
// for them upstream: events.k8s.io says regarding.* and reportingController,
// core says involvedObject.*, reportingComponent and source.
func TestEventFieldSelectors(t *testing.T) {
	ts := start(t, nil)
	ev := ts.Client.EventsV1().Events("default")
	now := metav1.NewMicroTime(time.Now())
	mk := func(name, controller, regarding, typ, reason string) *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name}, EventTime: now,
			ReportingController: controller, ReportingInstance: controller + "-1", Action: "Test",
			Reason: reason, Type: typ, Note: "n",
			Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: regarding, UID: types.UID("uid-" + regarding)},
		}
	}
	for _, e := range []*eventsv1.Event{
		mk("e1", "example.com/a", "p1", corev1.EventTypeNormal, "Started"),
		mk("e2", "example.com/b", "p1", corev1.EventTypeWarning, "Failed"),
		mk("e3", "example.com/a", "p2", corev1.EventTypeWarning, "Failed"),
	} {
		if _, err := ev.Create(ctx(t), e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(items []string) string { sort.Strings(items); return strings.Join(items, ",") }

	tests := []struct {
		selector string
		want     string // names, or "" when refused
	}{
		{selector: "reportingController=example.com/a", want: "e1,e3"},
		{selector: "reportingController!=example.com/a", want: "e2"},
		{selector: "regarding.name=p1", want: "e1,e2"},
		{selector: "regarding.uid=uid-p2,type=Warning", want: "e3"},
		{selector: "regarding.kind=Pod,regarding.namespace=default,regarding.apiVersion=v1,reason=Failed", want: "e2,e3"},
		{selector: "metadata.name=e1", want: "e1"},
		{selector: "involvedObject.name=p1"},
		{selector: "reportingComponent=example.com/a"},
		{selector: "source=example.com/a"},
	}
	for _, tc := range tests {
		t.Run("events.k8s.io "+tc.selector, func(t *testing.T) {
			l, err := ev.List(ctx(t), metav1.ListOptions{FieldSelector: tc.selector})
			if tc.want == "" {
				if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "field label not supported") {
					t.Errorf("err = %v, want 400 field label not supported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range l.Items {
				got = append(got, e.Name)
			}
			if names(got) != tc.want {
				t.Errorf("got %s, want %s", names(got), tc.want)
			}
		})
	}

	// The core group's names select the same events.
	l, err := ts.Client.CoreV1().Events("default").List(ctx(t), metav1.ListOptions{FieldSelector: "reportingComponent=example.com/a,involvedObject.name=p2"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "e3" {
		t.Errorf("core list: %v %v", err, l)
	}

	// A watch with reportingController sees only that controller's events.
	wctx, cancel := context.WithTimeout(ctx(t), 30*time.Second)
	defer cancel()
	w, err := ev.Watch(wctx, metav1.ListOptions{FieldSelector: "reportingController=example.com/b", ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, e := range []*eventsv1.Event{mk("e4", "example.com/a", "p3", corev1.EventTypeNormal, "X"), mk("e5", "example.com/b", "p3", corev1.EventTypeNormal, "X")} {
		if _, err := ev.Create(ctx(t), e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-w.ResultChan():
		e, ok := got.Object.(*eventsv1.Event)
		if got.Type != watch.Added || !ok || e.Name != "e5" {
			t.Errorf("watch event %s %#v, want ADDED e5", got.Type, got.Object)
		}
	case <-wctx.Done():
		t.Fatal("no watch event")
	}
}
