package validatingpolicy

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/admission"
)

// The bound policies follow every change of policies and bindings: a
// binding that arrives before its policy, a deleted binding, a binding
// naming another policy, and a reset.
func TestBoundPoliciesFollowChanges(t *testing.T) {
	deny := admissionregistrationv1.Deny
	p := policy(nil, admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5"})
	pl := newPlugin(t, nil, p)
	refused := func() bool { return pl.Validate(context.Background(), replicas(6, admission.Create)) != nil }
	if refused() {
		t.Fatal("a policy without a binding applied")
	}
	pl.Apply(watch.Event{Type: watch.Added, Object: bindingOf(nil, deny)})
	if !refused() {
		t.Fatal("the binding did not bind the policy")
	}
	pl.Apply(watch.Event{Type: watch.Modified, Object: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.PolicyName = "other" }, deny)})
	if refused() {
		t.Fatal("a binding moved to another policy still binds the first")
	}
	pl.Apply(watch.Event{Type: watch.Modified, Object: bindingOf(nil, deny)})
	pl.Apply(watch.Event{Type: watch.Deleted, Object: bindingOf(nil, deny)})
	if refused() {
		t.Fatal("a deleted binding still binds")
	}
	pl.Apply(watch.Event{Type: watch.Added, Object: bindingOf(nil, deny)})
	pl.ResetBindings()
	if refused() {
		t.Fatal("ResetBindings kept a binding")
	}
	pl.Apply(watch.Event{Type: watch.Added, Object: bindingOf(nil, deny)})
	pl.ResetPolicies()
	if refused() {
		t.Fatal("ResetPolicies kept a policy")
	}
	pl.Apply(watch.Event{Type: watch.Added, Object: p})
	if !refused() {
		t.Fatal("a policy arriving after its binding did not apply")
	}
}

// BenchmarkValidatePodCreate measures the plugin on a pod create, with no
// policy and with 10 bound policies about Deployments (none matches).
func BenchmarkValidatePodCreate(b *testing.B) {
	for _, n := range []int{0, 10} {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			pl := newPlugin(b, nil, policy(nil, admissionregistrationv1.Validation{Expression: "true"}))
			pl.ResetPolicies()
			for i := 0; i < n; i++ {
				p := policy(nil, admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5"})
				p.Name = fmt.Sprintf("p%d", i)
				pl.Apply(watch.Event{Type: watch.Added, Object: p})
				bd := bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.PolicyName = p.Name }, admissionregistrationv1.Deny)
				bd.Name = fmt.Sprintf("b%d", i)
				pl.Apply(watch.Event{Type: watch.Added, Object: bd})
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
			a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
				Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Namespace: "ns", Name: "p", Object: pod}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := pl.Validate(ctx, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
