package validatingpolicy

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/admission"
)

func rule(ops []admissionregistrationv1.OperationType, groups, versions, resources []string) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources},
	}}
}

var (
	all    = []string{"*"}
	create = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	anyOp  = []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
)

func deploymentAttrs(op admission.Operation, ns, sub string, labels map[string]string) *admission.Attributes {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: labels}}
	a := &admission.Attributes{
		Operation: op, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Subresource: sub,
		Namespace: ns, Name: "web", Object: d,
	}
	if op == admission.Delete {
		a.Object, a.OldObject = nil, d
	}
	return a
}

func TestMatchResources(t *testing.T) {
	nsLabels := func(_ context.Context, ns string) (map[string]string, error) {
		return map[string]string{"team": ns + "-team"}, nil
	}
	tests := []struct {
		name     string
		m        *admissionregistrationv1.MatchResources
		required bool
		a        *admission.Attributes
		want     bool
	}{
		{name: "binding without matchResources matches", m: nil, a: deploymentAttrs(admission.Create, "a", "", nil), want: true},
		{name: "policy without constraints matches nothing", m: nil, required: true, a: deploymentAttrs(admission.Create, "a", "", nil), want: false},
		{name: "exact rule", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(create, []string{"apps"}, []string{"v1"}, []string{"deployments"})}}, a: deploymentAttrs(admission.Create, "a", "", nil), want: true},
		{name: "other operation", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(create, all, all, all)}}, a: deploymentAttrs(admission.Update, "a", "", nil), want: false},
		{name: "star does not match subresources", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(anyOp, all, all, all)}}, a: deploymentAttrs(admission.Update, "a", "status", nil), want: false},
		{name: "resource/star matches its subresources", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(anyOp, all, all, []string{"deployments/*"})}}, a: deploymentAttrs(admission.Update, "a", "scale", nil), want: true},
		{name: "star/status", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(anyOp, all, all, []string{"*/status"})}}, a: deploymentAttrs(admission.Update, "a", "status", nil), want: true},
		{name: "other group", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(anyOp, []string{""}, all, all)}}, a: deploymentAttrs(admission.Create, "a", "", nil), want: false},
		{name: "excluded", required: true, m: &admissionregistrationv1.MatchResources{
			ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{rule(anyOp, all, all, all)},
			ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(create, []string{"apps"}, all, []string{"deployments"})},
		}, a: deploymentAttrs(admission.Create, "a", "", nil), want: false},
		{name: "resourceNames", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			{ResourceNames: []string{"other"}, RuleWithOperations: rule(anyOp, all, all, all).RuleWithOperations}}}, a: deploymentAttrs(admission.Create, "a", "", nil), want: false},
		{name: "cluster scope rule on a namespaced object", required: true, m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			func() admissionregistrationv1.NamedRuleWithOperations {
				r := rule(anyOp, all, all, all)
				r.Scope = ptr.To(admissionregistrationv1.ClusterScope)
				return r
			}()}}, a: deploymentAttrs(admission.Create, "a", "", nil), want: false},
		{name: "namespaceSelector matches", m: &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a-team"}}}, a: deploymentAttrs(admission.Create, "a", "", nil), want: true},
		{name: "namespaceSelector does not match", m: &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a-team"}}}, a: deploymentAttrs(admission.Create, "b", "", nil), want: false},
		{name: "objectSelector on the old object of a delete", m: &admissionregistrationv1.MatchResources{
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}, a: deploymentAttrs(admission.Delete, "a", "", map[string]string{"app": "x"}), want: true},
		{name: "objectSelector does not match", m: &admissionregistrationv1.MatchResources{
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}},
			a: deploymentAttrs(admission.Create, "a", "", nil), want: false},
		{name: "namespace matched by its own labels", m: &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			a: &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
				Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"env": "prod"}}}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := matchResources(context.Background(), tt.m, tt.a, nsLabels, tt.required)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
