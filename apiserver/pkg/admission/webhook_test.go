package admission

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

func TestWebhookRuleMatches(t *testing.T) {
	rule := func(ops []admissionregistrationv1.OperationType, resources ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources}}
	}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	podWrite := func(op Operation, sub string) *Attributes {
		return &Attributes{Operation: op, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Subresource: sub, Namespace: "ns"}
	}
	namespaced := admissionregistrationv1.NamespacedScope
	cluster := admissionregistrationv1.ClusterScope
	scoped := func(r admissionregistrationv1.RuleWithOperations, s admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		r.Scope = &s
		return r
	}
	tests := []struct {
		name string
		rule admissionregistrationv1.RuleWithOperations
		a    *Attributes
		want bool
	}{
		{"resource and operation", rule(create, "pods"), podWrite(Create, ""), true},
		{"other operation", rule(create, "pods"), podWrite(Update, ""), false},
		{"every operation", rule(all, "pods"), podWrite(Delete, ""), true},
		{"no subresource for a resource rule", rule(create, "pods"), podWrite(Create, "binding"), false},
		{"star: no subresource", rule(create, "*"), podWrite(Create, "binding"), false},
		{"star: a resource", rule(create, "*"), podWrite(Create, ""), true},
		{"star slash star", rule(create, "*/*"), podWrite(Create, "binding"), true},
		{"resource slash star", rule(create, "pods/*"), podWrite(Create, "binding"), true},
		{"resource slash star matches the resource itself, as upstream", rule(create, "pods/*"), podWrite(Create, ""), true},
		{"named subresource", rule(create, "services", "pods/binding"), podWrite(Create, "binding"), true},
		{"other version", admissionregistrationv1.RuleWithOperations{Operations: create,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v2"}, Resources: []string{"pods"}}}, podWrite(Create, ""), false},
		{"namespaced scope", scoped(rule(create, "pods"), namespaced), podWrite(Create, ""), true},
		{"cluster scope", scoped(rule(create, "pods"), cluster), podWrite(Create, ""), false},
		{"connect to a named subresource", rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Connect}, "pods/attach"), podWrite(Connect, "attach"), true},
		{"connect: other subresource", rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Connect}, "pods/attach"), podWrite(Connect, "exec"), false},
		{"connect: a create rule", rule(create, "pods/attach", "pods/exec"), podWrite(Connect, "attach"), false},
		{"connect: every operation", rule(all, "pods/*"), podWrite(Connect, "portforward"), true},
		{"connect: a resource rule has no subresource", rule(all, "pods"), podWrite(Connect, "exec"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ruleMatches(tc.rule, tc.a); got != tc.want {
				t.Errorf("ruleMatches = %v, want %v", got, tc.want)
			}
		})
	}
}

// The webhooks follow their configurations' watch events, in name order,
// and their selectors decide as before they were parsed ahead.
func TestWebhooksFollowConfigurations(t *testing.T) {
	ns := NewNamespaceLifecycle(nil)
	ns.Apply(watch.Event{Type: watch.Added, Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "in", Labels: map[string]string{"inject": "enabled"}}}})
	ns.Apply(watch.Event{Type: watch.Added, Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "out"}}})
	w := NewWebhooks(ns.Labels, nil)
	names := func(mutating bool) []string {
		var out []string
		for _, h := range w.hooks(mutating) {
			out = append(out, h.name)
		}
		return out
	}
	evs := webhookConfigs(2)
	for _, ev := range evs {
		w.Apply(ev)
	}
	if got := names(true); len(got) != 4 || got[0] != "ns.m0.example.com" || got[3] != "obj.m1.example.com" {
		t.Fatalf("mutating hooks %v", got)
	}
	w.Apply(watch.Event{Type: watch.Deleted, Object: evs[0].Object})
	if got := names(true); len(got) != 2 || got[0] != "ns.m1.example.com" {
		t.Fatalf("after deleting mutating-0: %v", got)
	}
	if got := names(false); len(got) != 4 {
		t.Fatalf("validating hooks %v", got)
	}
	w.Reset(false)
	if got := names(false); len(got) != 0 {
		t.Fatalf("after Reset: %v", got)
	}

	pod := func(namespace string, lbls map[string]string) *Attributes {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: namespace, Labels: lbls}}
		return &Attributes{Operation: Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: namespace, Name: "p", Object: p}
	}
	hooks := w.hooks(true) // ns.m1 (namespace selector), obj.m1 (object selector)
	tests := []struct {
		name         string
		a            *Attributes
		wantNS, want bool
	}{
		{"namespace opted in", pod("in", nil), true, false},
		{"namespace not opted in", pod("out", nil), false, false},
		{"labelled object", pod("out", map[string]string{"sidecar": "yes"}), false, true},
		{"a delete: no rule", &Attributes{Operation: Delete, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "in"}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotNS, err := w.selected(context.Background(), hooks[0], tc.a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.selected(context.Background(), hooks[1], tc.a)
			if err != nil {
				t.Fatal(err)
			}
			if gotNS != tc.wantNS || got != tc.want {
				t.Errorf("namespace-selected %v, object-selected %v; want %v, %v", gotNS, got, tc.wantNS, tc.want)
			}
		})
	}
}

// A selector that does not parse fails the requests the webhook's rules
// match, and only those.
func TestWebhookBadSelector(t *testing.T) {
	w := NewWebhooks(func(context.Context, string) (map[string]string, error) { return nil, nil }, nil)
	url := "https://127.0.0.1:1/"
	w.Apply(watch.Event{Type: watch.Added, Object: &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "bad.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}}},
	}})
	v := ValidatingWebhooks{Webhooks: w}
	cm := &Attributes{Operation: Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns", Object: &corev1.ConfigMap{}}
	if err := v.Validate(context.Background(), cm); err == nil {
		t.Error("a matching request passed a webhook whose selector does not parse")
	}
	other := &Attributes{Operation: Create, Resource: corev1.SchemeGroupVersion.WithResource("secrets"), Namespace: "ns", Object: &corev1.Secret{}}
	if err := v.Validate(context.Background(), other); err != nil {
		t.Errorf("a request the rules do not match: %v", err)
	}
}

// Selectors on a CONNECT request, as upstream's: its options have no
// labels, so no objectSelector selects it (not even one that matches an
// empty set); a namespaceSelector reads the namespace of a namespaced
// one, and never exempts a cluster-scoped one (nodes/proxy).
func TestWebhookSelectorsOnConnect(t *testing.T) {
	ns := NewNamespaceLifecycle(nil)
	ns.Apply(watch.Event{Type: watch.Added, Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "in", Labels: map[string]string{"team": "a"}}}})
	ns.Apply(watch.Event{Type: watch.Added, Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "out"}}})
	w := NewWebhooks(ns.Labels, nil)
	url := "https://127.0.0.1:1/"
	connect := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Connect},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/attach", "nodes/proxy"}}}}
	w.Apply(watch.Event{Type: watch.Added, Object: &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "a-ns.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, Rules: connect,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
			{Name: "b-absent-label.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, Rules: connect,
				ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpDoesNotExist}}}},
			{Name: "c-plain.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, Rules: connect},
		},
	}})
	attach := func(namespace string) *Attributes {
		return &Attributes{Operation: Connect, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: "attach",
			Kind: corev1.SchemeGroupVersion.WithKind("PodAttachOptions"), Namespace: namespace, Name: "p", Object: &corev1.PodAttachOptions{Stdin: true}}
	}
	nodeProxy := &Attributes{Operation: Connect, Resource: corev1.SchemeGroupVersion.WithResource("nodes"), Subresource: "proxy",
		Kind: corev1.SchemeGroupVersion.WithKind("NodeProxyOptions"), Name: "n1", Object: &corev1.NodeProxyOptions{Path: "/metrics"}}
	for _, tc := range []struct {
		name string
		a    *Attributes
		want []bool // per webhook, in order
	}{
		{"attach in a selected namespace", attach("in"), []bool{true, false, true}},
		{"attach elsewhere", attach("out"), []bool{false, false, true}},
		{"nodes/proxy", nodeProxy, []bool{true, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, h := range w.hooks(false) {
				got, err := w.selected(context.Background(), h, tc.a)
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want[i] {
					t.Errorf("%s: selected %v, want %v", h.name, got, tc.want[i])
				}
			}
		})
	}
}
