package convert

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEventRoundTrip(t *testing.T) {
	ts := metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	micro := metav1.NewMicroTime(time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC))
	core := &corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: "e", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "ns", FieldPath: "spec.containers{c}"},
		Reason:         "Pulled", Message: "pulled image", Source: corev1.EventSource{Component: "kubelet", Host: "n1"},
		FirstTimestamp: ts, LastTimestamp: ts, Count: 3, Type: "Normal", EventTime: micro,
		Series: &corev1.EventSeries{Count: 2, LastObservedTime: micro}, Action: "Pull",
		Related: &corev1.ObjectReference{Kind: "Node", Name: "n1"}, ReportingController: "kubelet", ReportingInstance: "n1",
	}
	v1 := EventFromCore(core)
	if v1.Note != "pulled image" || v1.Regarding.Name != "p" || v1.DeprecatedCount != 3 || v1.DeprecatedSource.Host != "n1" ||
		v1.Series.Count != 2 || v1.APIVersion != "events.k8s.io/v1" {
		t.Errorf("to events.k8s.io: %+v", v1)
	}
	back := EventToCore(v1)
	if !equality.Semantic.DeepEqual(back, core) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", back, core)
	}
	list := EventListToCore(EventListFromCore(&corev1.EventList{Items: []corev1.Event{*core}}))
	if len(list.Items) != 1 || !equality.Semantic.DeepEqual(&list.Items[0], core) {
		t.Errorf("list round trip: %+v", list)
	}
	if EventFromCore(&corev1.Event{}).Series != nil {
		t.Error("an event without a series gained one")
	}
}
