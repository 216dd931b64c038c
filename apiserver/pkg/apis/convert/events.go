package convert

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EventToCore converts an events.k8s.io/v1 Event to the core/v1 Event it is
// stored as.
func EventToCore(in *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:          *in.ObjectMeta.DeepCopy(),
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		Related:             in.Related.DeepCopy(),
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out
}

// EventFromCore converts a stored core/v1 Event to events.k8s.io/v1.
func EventFromCore(in *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta:               *in.ObjectMeta.DeepCopy(),
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related.DeepCopy(),
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out
}

// EventListFromCore converts a list.
func EventListFromCore(in *corev1.EventList) *eventsv1.EventList {
	out := &eventsv1.EventList{
		TypeMeta: metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "EventList"},
		ListMeta: in.ListMeta,
		Items:    make([]eventsv1.Event, 0, len(in.Items)),
	}
	for i := range in.Items {
		out.Items = append(out.Items, *EventFromCore(&in.Items[i]))
	}
	return out
}

// EventListToCore converts a list back.
func EventListToCore(in *eventsv1.EventList) *corev1.EventList {
	out := &corev1.EventList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "EventList"},
		ListMeta: in.ListMeta,
		Items:    make([]corev1.Event, 0, len(in.Items)),
	}
	for i := range in.Items {
		out.Items = append(out.Items, *EventToCore(&in.Items[i]))
	}
	return out
}
