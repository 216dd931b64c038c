package printers

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// addAPIRegistrationHandlers prints APIServices as upstream's
// kube-aggregator: NAME SERVICE AVAILABLE AGE, SERVICE "Local" or
// <namespace>/<name>, AVAILABLE the Available condition's status with its
// reason when it is not True.
func (p *Printer) addAPIRegistrationHandlers() {
	register(p, []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
		{Name: "Available", Type: "string", Description: "Whether this service is available."},
		ageColumn(),
	}, func(obj *apiregistrationv1.APIService) metav1.TableRow {
		return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: []interface{}{obj.Name, apiServiceBackend(obj), apiServiceAvailable(obj), p.since(obj.CreationTimestamp)}}
	}, func(l *apiregistrationv1.APIServiceList) []apiregistrationv1.APIService {
		return l.Items
	})
}

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
