package tables

import (
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func policyParamKind(obj *admissionregistrationv1.ValidatingAdmissionPolicy) string {
	if pk := obj.Spec.ParamKind; pk != nil {
		return pk.APIVersion + "/" + pk.Kind
	}
	return "<unset>"
}

// bindingParamRef: namespace/name, "*/name" when the namespace is not
// given (it may be cluster-scoped), or the selector.
func bindingParamRef(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string {
	pr := obj.Spec.ParamRef
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		if s, err := metav1.LabelSelectorAsSelector(pr.Selector); err == nil {
			return s.String()
		}
	}
	return "<unset>"
}

// ValidatingAdmissionPolicy prints admissionregistrationv1.ValidatingAdmissionPolicy objects and lists.
var ValidatingAdmissionPolicy = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		ageColumn(),
	}, func(obj *admissionregistrationv1.ValidatingAdmissionPolicy) metav1.TableRow {
		return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: []interface{}{obj.Name, int64(len(obj.Spec.Validations)), policyParamKind(obj), p.since(obj.CreationTimestamp)}}
	}, func(l *admissionregistrationv1.ValidatingAdmissionPolicyList) []admissionregistrationv1.ValidatingAdmissionPolicy {
		return l.Items
	})
}}

// ValidatingAdmissionPolicyBinding prints admissionregistrationv1.ValidatingAdmissionPolicyBinding objects and lists.
var ValidatingAdmissionPolicyBinding = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configration param"},
		ageColumn(),
	}, func(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) metav1.TableRow {
		return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: []interface{}{obj.Name, obj.Spec.PolicyName, bindingParamRef(obj), p.since(obj.CreationTimestamp)}}
	}, func(l *admissionregistrationv1.ValidatingAdmissionPolicyBindingList) []admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return l.Items
	})
}}
