package tables

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func apiServiceBackend(obj *apiregistrationv1.APIService) string {
	if s := obj.Spec.Service; s != nil {
		return s.Namespace + "/" + s.Name
	}
	return "Local"
}

func apiServiceAvailable(obj *apiregistrationv1.APIService) string {
	for _, c := range obj.Status.Conditions {
		if c.Type != apiregistrationv1.Available {
			continue
		}
		if c.Status != apiregistrationv1.ConditionTrue && c.Reason != "" {
			return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
		}
		return string(c.Status)
	}
	return string(apiregistrationv1.ConditionUnknown)
}

// APIService prints apiregistrationv1.APIService objects and lists.
var APIService = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
		{Name: "Available", Type: "string", Description: "Whether this service is available."},
		ageColumn(),
	}, func(obj *apiregistrationv1.APIService) metav1.TableRow {
		return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: []interface{}{obj.Name, apiServiceBackend(obj), apiServiceAvailable(obj), p.since(obj.CreationTimestamp)}}
	}, func(l *apiregistrationv1.APIServiceList) []apiregistrationv1.APIService {
		return l.Items
	})
}}
