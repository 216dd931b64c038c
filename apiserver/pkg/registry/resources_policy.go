package registry

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// policyResources are the ValidatingAdmissionPolicy kinds: cluster-scoped,
// in the api-extensions category as upstream, the policy with a status
// subresource (status.typeChecking).
func policyResources() []*Resource {
	return []*Resource{
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy", Resource: "validatingadmissionpolicies",
			SingularName: "validatingadmissionpolicy", EtcdPrefix: "validatingadmissionpolicies", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
			Strategy: main(conditionalUpdate, withGeneration), StatusStrategy: status(conditionalUpdate),
		},
		{
			Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding", Resource: "validatingadmissionpolicybindings",
			SingularName: "validatingadmissionpolicybinding", EtcdPrefix: "validatingadmissionpolicybindings", Categories: []string{"api-extensions"},
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} },
			Strategy: whole(conditionalUpdate, withGeneration),
		},
	}
}
