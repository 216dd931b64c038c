package validatingpolicy

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/authn"
)

// configMaps is an in-memory admission.Objects of ConfigMaps.
type configMaps []*corev1.ConfigMap

func (c configMaps) Get(_ context.Context, group, resource, namespace, name string) (runtime.Object, error) {
	for _, cm := range c {
		if group == "" && resource == "configmaps" && cm.Namespace == namespace && cm.Name == name {
			return cm, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (c configMaps) List(_ context.Context, group, resource, namespace string) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, cm := range c {
		if group == "" && resource == "configmaps" && (namespace == "" || cm.Namespace == namespace) {
			out = append(out, cm)
		}
	}
	return out, nil
}

func newPlugin(t testing.TB, params configMaps, policy *admissionregistrationv1.ValidatingAdmissionPolicy, bindings ...*admissionregistrationv1.ValidatingAdmissionPolicyBinding) *Plugin {
	t.Helper()
	p, err := New(Config{
		Objects: params,
		Namespace: func(_ context.Context, name string) (*corev1.Namespace, error) {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}}}, nil
		},
		Kinds: func(apiVersion, kind string) (string, string, bool, bool) {
			if apiVersion == "v1" && kind == "ConfigMap" {
				return "", "configmaps", true, true
			}
			if apiVersion == "v1" && kind == "Node" {
				return "", "nodes", false, true
			}
			return "", "", false, false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Apply(watch.Event{Type: watch.Added, Object: policy})
	for _, b := range bindings {
		p.Apply(watch.Event{Type: watch.Added, Object: b})
	}
	return p
}

func policy(mutate func(*admissionregistrationv1.ValidatingAdmissionPolicySpec), validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 1, UID: "u1"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule(anyOp, []string{"apps"}, all, []string{"deployments"}),
			}},
			Validations: validations,
		},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

func bindingOf(mutate func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec), actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: actions},
	}
	if mutate != nil {
		mutate(&b.Spec)
	}
	return b
}

func replicas(n int32, op admission.Operation) *admission.Attributes {
	a := deploymentAttrs(op, "ns", "", map[string]string{"app": "web"})
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(n)}}
	switch op {
	case admission.Delete:
		a.OldObject = d
	case admission.Update:
		a.Object, a.OldObject = d, d.DeepCopy()
	default:
		a.Object = d
	}
	a.User = &authn.User{Name: "alice", Groups: []string{"devs"}}
	return a
}

func TestValidate(t *testing.T) {
	deny := []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	v := func(expr string) admissionregistrationv1.Validation {
		return admissionregistrationv1.Validation{Expression: expr}
	}
	cm := func(name string, labels map[string]string, max string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels}, Data: map[string]string{"max": max}}
	}
	withParams := func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	}
	tests := []struct {
		name        string
		policy      *admissionregistrationv1.ValidatingAdmissionPolicy
		binding     *admissionregistrationv1.ValidatingAdmissionPolicyBinding
		params      configMaps
		attrs       *admission.Attributes
		wantCode    int32  // 0: allowed
		wantMessage string // the cause's message
		wantWarning string
		wantAudit   string // a substring of the validation_failure annotation
	}{
		{name: "passes", policy: policy(nil, v("object.spec.replicas <= 5")), binding: bindingOf(nil, deny...), attrs: replicas(5, admission.Create)},
		{name: "denied with the expression", policy: policy(nil, v("object.spec.replicas <= 5")), binding: bindingOf(nil, deny...), attrs: replicas(6, admission.Create),
			wantCode: 422, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.spec.replicas <= 5"},
		{name: "message and reason", policy: policy(nil, admissionregistrationv1.Validation{Expression: "false", Message: " no ", Reason: ptr.To(metav1.StatusReasonForbidden)}),
			binding: bindingOf(nil, deny...), attrs: replicas(1, admission.Create),
			wantCode: 403, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no"},
		{name: "messageExpression", policy: policy(nil, admissionregistrationv1.Validation{Expression: "false", Message: "fallback", MessageExpression: "'user ' + request.userInfo.username + ' on ' + request.operation"}),
			binding: bindingOf(nil, deny...), attrs: replicas(1, admission.Create),
			wantCode: 422, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: user alice on CREATE"},
		{name: "messageExpression that errors falls back to message", policy: policy(nil, admissionregistrationv1.Validation{Expression: "false", Message: "fallback", MessageExpression: "object.nothing"}),
			binding: bindingOf(nil, deny...), attrs: replicas(1, admission.Create),
			wantCode: 422, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: fallback"},
		{name: "object is null on delete", policy: policy(nil, v("object == null && oldObject.spec.replicas == 2")), binding: bindingOf(nil, deny...), attrs: replicas(2, admission.Delete)},
		{name: "namespaceObject", policy: policy(nil, v("namespaceObject.metadata.labels.env == 'prod' && namespaceObject.metadata.name == 'ns'")), binding: bindingOf(nil, deny...), attrs: replicas(2, admission.Create)},
		{name: "request fields", policy: policy(nil, v("request.kind.kind == 'Deployment' && request.resource.group == 'apps' && request.namespace == 'ns' && request.name == 'web' && 'devs' in request.userInfo.groups && request.dryRun == false")),
			binding: bindingOf(nil, deny...), attrs: replicas(2, admission.Create)},
		{name: "variables", policy: policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []admissionregistrationv1.Variable{{Name: "limit", Expression: "3"}, {Name: "over", Expression: "object.spec.replicas > variables.limit"}}
		}, v("!variables.over")), binding: bindingOf(nil, deny...), attrs: replicas(4, admission.Create),
			wantCode: 422, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: !variables.over"},
		{name: "matchConditions false skips", policy: policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "true"}, {Name: "b", Expression: "request.operation == 'UPDATE'"}}
		}, v("false")), binding: bindingOf(nil, deny...), attrs: replicas(4, admission.Create)},
		{name: "matchConditions true applies", policy: policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "b", Expression: "request.operation == 'CREATE'"}}
		}, v("false")), binding: bindingOf(nil, deny...), attrs: replicas(4, admission.Create),
			wantCode: 422, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: false"},
		{name: "error with Fail denies", policy: policy(nil, v("object.spec.nothing == 1")), binding: bindingOf(nil, deny...), attrs: replicas(1, admission.Create),
			wantCode: 422, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'object.spec.nothing == 1' resulted in error: no such key: nothing"},
		{name: "error with Ignore allows", policy: policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
		}, v("object.spec.nothing == 1")), binding: bindingOf(nil, deny...), attrs: replicas(1, admission.Create)},
		{name: "warn", policy: policy(nil, v("false")), binding: bindingOf(nil, admissionregistrationv1.Warn), attrs: replicas(1, admission.Create),
			wantWarning: "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': failed expression: false"},
		{name: "audit", policy: policy(nil, v("true"), v("false")), binding: bindingOf(nil, admissionregistrationv1.Audit, admissionregistrationv1.Warn), attrs: replicas(1, admission.Create),
			wantWarning: "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': failed expression: false",
			wantAudit:   `[{"message":"failed expression: false","policy":"p","binding":"b","expressionIndex":1,"validationActions":["Audit","Warn"]}]`},
		{name: "binding matchResources excludes", policy: policy(nil, v("false")), binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}
		}, deny...), attrs: replicas(1, admission.Create)},
		{name: "params by name", policy: policy(withParams, v("object.spec.replicas <= int(params.data.max)")), params: configMaps{cm("limits", nil, "2")},
			binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
				s.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
			}, deny...), attrs: replicas(3, admission.Create),
			wantCode: 422, wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.spec.replicas <= int(params.data.max)"},
		{name: "params by selector: every one must pass", policy: policy(withParams, v("object.spec.replicas <= int(params.data.max)")),
			params: configMaps{cm("a", map[string]string{"limit": "yes"}, "9"), cm("b", map[string]string{"limit": "yes"}, "2"), cm("c", nil, "1")},
			binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
				s.ParamRef = &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"limit": "yes"}}, ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
			}, deny...), attrs: replicas(3, admission.Create), wantCode: 422,
			wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.spec.replicas <= int(params.data.max)"},
		{name: "param not found, Allow: params null", policy: policy(withParams, v("params == null")),
			binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
				s.ParamRef = &admissionregistrationv1.ParamRef{Name: "missing", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}
			}, deny...), attrs: replicas(3, admission.Create)},
		{name: "param not found, Deny", policy: policy(withParams, v("true")),
			binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
				s.ParamRef = &admissionregistrationv1.ParamRef{Name: "missing", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
			}, deny...), attrs: replicas(3, admission.Create), wantCode: 422,
			wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"},
		{name: "paramKind without paramRef", policy: policy(withParams, v("true")), binding: bindingOf(nil, deny...), attrs: replicas(3, admission.Create), wantCode: 422,
			wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: paramKind kind `ConfigMap` is set but paramRef is nil"},
		{name: "namespace for a cluster-scoped paramKind", policy: policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "Node"}
		}, v("true")), binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef = &admissionregistrationv1.ParamRef{Name: "n", Namespace: "ns", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}
		}, deny...), attrs: replicas(3, admission.Create), wantCode: 422,
			wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: paramRef.namespace must not be provided for a cluster-scoped `paramKind`"},
		{name: "unknown paramKind", policy: policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limits"}
		}, v("true")), binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef = &admissionregistrationv1.ParamRef{Name: "n", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}
		}, deny...), attrs: replicas(3, admission.Create), wantCode: 422,
			wantMessage: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Limits'"},
		{name: "binding of another policy", policy: policy(nil, v("false")), binding: bindingOf(func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.PolicyName = "other" }, deny...),
			attrs: replicas(3, admission.Create)},
		{name: "policy that does not compile, Fail", policy: policy(nil, v("object.spec.replicas <=")), binding: bindingOf(nil, deny...), attrs: replicas(3, admission.Create), wantCode: 422,
			wantMessage: "ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: spec.validations[0].expression: compilation failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin(t, tt.params, tt.policy, tt.binding)
			ctx, notes := admission.WithNotes(context.Background())
			err := p.Validate(ctx, tt.attrs)
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
			} else {
				var se *apierrors.StatusError
				if !errors.As(err, &se) {
					t.Fatalf("got %v, want a StatusError", err)
				}
				if se.ErrStatus.Code != tt.wantCode {
					t.Errorf("code %d, want %d", se.ErrStatus.Code, tt.wantCode)
				}
				causes := se.ErrStatus.Details.Causes
				if len(causes) != 1 || !strings.HasPrefix(causes[0].Message, tt.wantMessage) {
					t.Errorf("causes %+v, want one starting %q", causes, tt.wantMessage)
				}
				if want := `deployments.apps "web" is forbidden: ` + causes[0].Message; se.ErrStatus.Message != want {
					t.Errorf("message %q, want %q", se.ErrStatus.Message, want)
				}
			}
			warnings := notes.TakeWarnings()
			if tt.wantWarning == "" && len(warnings) > 0 || tt.wantWarning != "" && (len(warnings) != 1 || warnings[0] != tt.wantWarning) {
				t.Errorf("warnings %q, want %q", warnings, tt.wantWarning)
			}
			got := notes.AuditAnnotations()[ValidationFailureAnnotation]
			if got != tt.wantAudit {
				t.Errorf("audit annotation %q, want %q", got, tt.wantAudit)
			}
		})
	}
}

func TestAuditAnnotations(t *testing.T) {
	p := policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations = nil
		s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{
			{Key: "replicas", ValueExpression: "'replicas: ' + string(object.spec.replicas)"},
			{Key: "skipped", ValueExpression: "null"},
		}
	})
	pl := newPlugin(t, nil, p, bindingOf(nil, admissionregistrationv1.Deny))
	ctx, notes := admission.WithNotes(context.Background())
	if err := pl.Validate(ctx, replicas(4, admission.Create)); err != nil {
		t.Fatal(err)
	}
	got := notes.AuditAnnotations()
	if got["p/replicas"] != "replicas: 4" || len(got) != 1 {
		t.Errorf("annotations %v, want p/replicas only", got)
	}
}

func TestCompiledOncePerGeneration(t *testing.T) {
	p := policy(nil, admissionregistrationv1.Validation{Expression: "false"})
	pl := newPlugin(t, nil, p, bindingOf(nil, admissionregistrationv1.Deny))
	first := pl.policies["p"].validations[0].expr
	// A status update keeps the generation: the compiled programs stay.
	st := p.DeepCopy()
	st.Status.ObservedGeneration = 1
	pl.Apply(watch.Event{Type: watch.Modified, Object: st})
	if pl.policies["p"].validations[0].expr != first {
		t.Error("recompiled without a generation change")
	}
	// A new generation is compiled again and takes effect.
	next := p.DeepCopy()
	next.Generation = 2
	next.Spec.Validations[0].Expression = "true"
	pl.Apply(watch.Event{Type: watch.Modified, Object: next})
	if err := pl.Validate(context.Background(), replicas(1, admission.Create)); err != nil {
		t.Errorf("the new generation is not in force: %v", err)
	}
	// Deleting the policy leaves its binding without effect.
	pl.Apply(watch.Event{Type: watch.Deleted, Object: next})
	if len(pl.hooks()) != 0 {
		t.Error("a deleted policy still applies")
	}
}

func TestExempt(t *testing.T) {
	pl := newPlugin(t, nil, policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints.ResourceRules = []admissionregistrationv1.NamedRuleWithOperations{rule(anyOp, all, all, all)}
	}, admissionregistrationv1.Validation{Expression: "false"}), bindingOf(nil, admissionregistrationv1.Deny))
	a := &admission.Attributes{Operation: admission.Delete, Name: "b",
		Resource: schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}}
	if err := pl.Validate(context.Background(), a); err != nil {
		t.Errorf("a policy applied to its own kinds: %v", err)
	}
}

// TestDenyDelete: a DELETE has no object; upstream's admission.NewForbidden
// names the request's object (extractResourceName: the attributes' name
// first), "Unknown" only when there is no name at all.
func TestDenyDelete(t *testing.T) {
	pl := newPlugin(t, nil, policy(nil, admissionregistrationv1.Validation{Expression: "oldObject.spec.replicas < 2"}), bindingOf(nil, admissionregistrationv1.Deny))
	err := pl.Validate(context.Background(), replicas(3, admission.Delete))
	want := `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: oldObject.spec.replicas < 2`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	unnamed := replicas(3, admission.Delete)
	unnamed.Name = ""
	err = pl.Validate(context.Background(), unnamed)
	if want := strings.Replace(want, `"web"`, `"Unknown"`, 1); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestConcurrentApplyAndValidate: watch events arrive while requests are
// admitted (run with -race).
func TestConcurrentApplyAndValidate(t *testing.T) {
	p := policy(nil, admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5"})
	pl := newPlugin(t, nil, p, bindingOf(nil, admissionregistrationv1.Deny))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(2); i < 200; i++ {
			next := p.DeepCopy()
			next.Generation = i
			pl.Apply(watch.Event{Type: watch.Modified, Object: next})
			pl.Apply(watch.Event{Type: watch.Modified, Object: bindingOf(nil, admissionregistrationv1.Deny)})
		}
	}()
	for i := 0; i < 200; i++ {
		if err := pl.Validate(context.Background(), replicas(6, admission.Create)); !apierrors.IsInvalid(err) {
			t.Fatalf("request %d: %v, want Invalid", i, err)
		}
	}
	<-done
}

// TestDenyConnect: a policy on CONNECT pods/exec sees the options as the
// object, and its denial names the pod, as upstream's.
func TestDenyConnect(t *testing.T) {
	pl := newPlugin(t, nil, policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints.ResourceRules = []admissionregistrationv1.NamedRuleWithOperations{
			rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Connect}, []string{""}, all, []string{"pods/exec"})}
	}, admissionregistrationv1.Validation{Expression: "object.kind == 'PodExecOptions' && !object.command.exists(c, c == 'rm')", Message: "no rm"}),
		bindingOf(nil, admissionregistrationv1.Deny))
	exec := func(command ...string) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Connect, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: "exec",
			Kind: corev1.SchemeGroupVersion.WithKind("PodExecOptions"), Namespace: "ns", Name: "p1",
			Object: &corev1.PodExecOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodExecOptions"}, Command: command, Stdout: true}}
	}
	if err := pl.Validate(context.Background(), exec("ls", "/")); err != nil {
		t.Errorf("allowed exec: %v", err)
	}
	err := pl.Validate(context.Background(), exec("rm", "-rf", "/"))
	want := `pods "p1" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no rm`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	// A rule on CREATE of pods/exec does not match CONNECT.
	pl = newPlugin(t, nil, policy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints.ResourceRules = []admissionregistrationv1.NamedRuleWithOperations{rule(create, []string{""}, all, []string{"pods/exec"})}
	}, admissionregistrationv1.Validation{Expression: "false"}), bindingOf(nil, admissionregistrationv1.Deny))
	if err := pl.Validate(context.Background(), exec("rm")); err != nil {
		t.Errorf("a CREATE rule on CONNECT: %v", err)
	}
}
