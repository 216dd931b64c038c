// Package event holds the strategies and selectable fields of the Event
// kinds: core v1 Events and events.k8s.io/v1 Events, which are served from
// the core Events' storage. Upstream has no v1 defaults for them.
package event

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/apis/convert"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Strategy is the core Event's: no status; PUT may create it.
var Strategy = rest.Whole(rest.WithCreateOnUpdate, rest.Validation(validation.ValidateEvent, validation.ValidateEventUpdate))

// V1Strategy is the events.k8s.io Event's: upstream's strict rules on
// create, the legacy ones on update.
var V1Strategy = rest.Whole(rest.WithCreateOnUpdate, rest.Validation(validation.ValidateEventsV1Event, validation.ValidateEventsV1EventUpdate))

// Fields are a core Event's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return nil
	}
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}

// eventsV1FieldLabels is upstream's field label conversion of
// events.k8s.io Events: their selectable fields as core Events name them.
var eventsV1FieldLabels = map[string]string{
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
}

// eventsV1Fields are the selectable fields of events.k8s.io Events, named
// as upstream's field label conversion of that group names them
// (regarding.*, reportingController) and read from the core Event they are
// stored as (the storage filters core Events).
// V1Fields are an events.k8s.io Event's selectable fields.
func V1Fields(obj runtime.Object) fields.Set {
	if e, ok := obj.(*eventsv1.Event); ok {
		obj = convert.EventToCore(e)
	}
	core := Fields(obj)
	if core == nil {
		return nil
	}
	return fields.Set{
		"regarding.kind":            core["involvedObject.kind"],
		"regarding.namespace":       core["involvedObject.namespace"],
		"regarding.name":            core["involvedObject.name"],
		"regarding.uid":             core["involvedObject.uid"],
		"regarding.apiVersion":      core["involvedObject.apiVersion"],
		"regarding.resourceVersion": core["involvedObject.resourceVersion"],
		"regarding.fieldPath":       core["involvedObject.fieldPath"],
		"reportingController":       core["reportingComponent"],
		"reason":                    core["reason"],
		"type":                      core["type"],
	}
}

// V1Storage serves events.k8s.io Events from the core Events' storage.
func V1Storage() *rest.SharedStorage {
	return &rest.SharedStorage{
		Group: "", Resource: "events",
		FieldLabels:  eventsV1FieldLabels,
		StoredFields: rest.AttrFunc(true, Fields),
		ToStored: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*eventsv1.Event)
			if !ok {
				return nil, fmt.Errorf("expected an events.k8s.io/v1 Event, got %T", obj)
			}
			return convert.EventToCore(e), nil
		},
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*corev1.Event)
			if !ok {
				return obj, nil
			}
			return convert.EventFromCore(e), nil
		},
		ListFromStored: func(obj runtime.Object) (runtime.Object, error) {
			l, ok := obj.(*corev1.EventList)
			if !ok {
				return nil, fmt.Errorf("expected a core EventList, got %T", obj)
			}
			return convert.EventListFromCore(l), nil
		},
		NewStoredList: func() runtime.Object { return &corev1.EventList{} },
	}
}
