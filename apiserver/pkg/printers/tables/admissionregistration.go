package tables

import (
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MutatingWebhookConfiguration prints admissionregistrationv1.MutatingWebhookConfiguration objects and lists.
var MutatingWebhookConfiguration = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(webhookColumns(), func(obj *admissionregistrationv1.MutatingWebhookConfiguration) metav1.TableRow {
		return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: []interface{}{obj.Name, int64(len(obj.Webhooks)), p.since(obj.CreationTimestamp)}}
	}, func(l *admissionregistrationv1.MutatingWebhookConfigurationList) []admissionregistrationv1.MutatingWebhookConfiguration {
		return l.Items
	})
}}

// ValidatingWebhookConfiguration prints admissionregistrationv1.ValidatingWebhookConfiguration objects and lists.
var ValidatingWebhookConfiguration = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(webhookColumns(), func(obj *admissionregistrationv1.ValidatingWebhookConfiguration) metav1.TableRow {
		return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: []interface{}{obj.Name, int64(len(obj.Webhooks)), p.since(obj.CreationTimestamp)}}
	}, func(l *admissionregistrationv1.ValidatingWebhookConfigurationList) []admissionregistrationv1.ValidatingWebhookConfiguration {
		return l.Items
	})
}}

// webhookColumns: NAME WEBHOOKS AGE, as upstream prints webhook
// configurations.
func webhookColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		ageColumn(),
	}
}
