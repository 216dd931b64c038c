package validatingpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/celpolicy"
)

// PluginName is upstream's name of the plugin.
const PluginName = "ValidatingAdmissionPolicy"

// ValidationFailureAnnotation is the audit annotation of an Audit action.
const ValidationFailureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

// KindResolver finds the resource of a paramKind: its group, plural name
// and whether it is namespaced; ok is false for a kind not served.
type KindResolver func(apiVersion, kind string) (group, resource string, namespaced, ok bool)

// Config is what the plugin reads.
type Config struct {
	// Objects reads parameter objects.
	Objects admission.Objects
	// Namespace reads a namespace (namespaceObject, namespaceSelector).
	Namespace func(ctx context.Context, name string) (*corev1.Namespace, error)
	// Kinds resolves paramKind.
	Kinds KindResolver
	// Authorizer answers the CEL authorizer library's checks (nil: every
	// check is an errored decision).
	Authorizer authz.Authorizer
}

// Plugin is the ValidatingAdmissionPolicy admission plugin.
type Plugin struct {
	cfg Config
	env *celpolicy.Env

	mu       sync.RWMutex
	policies map[string]*compiledPolicy
	bindings map[string]*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// bound is every bound policy in name order, rebuilt when a policy or
	// binding changes so a request only reads it.
	bound []hook
}

var (
	_ admission.Plugin              = (*Plugin)(nil)
	_ admission.ValidationInterface = (*Plugin)(nil)
)

// New builds the plugin with its CEL environment.
func New(cfg Config) (*Plugin, error) {
	env, err := celpolicy.NewEnv()
	if err != nil {
		return nil, err
	}
	return &Plugin{
		cfg: cfg, env: env,
		policies: map[string]*compiledPolicy{},
		bindings: map[string]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{},
	}, nil
}

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Apply records a watch event of a policy or a binding. A policy is
// compiled when it is new or its generation changed.
func (p *Plugin) Apply(ev watch.Event) {
	switch o := ev.Object.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		if ev.Type == watch.Deleted {
			p.mu.Lock()
			delete(p.policies, o.Name)
			p.rebindLocked()
			p.mu.Unlock()
			return
		}
		if ev.Type != watch.Added && ev.Type != watch.Modified {
			return
		}
		p.mu.RLock()
		old := p.policies[o.Name]
		p.mu.RUnlock()
		var c *compiledPolicy
		if old != nil && old.policy.UID == o.UID && old.policy.Generation == o.Generation && o.Generation != 0 {
			cp := *old
			cp.policy = o
			c = &cp
		} else {
			c = compilePolicy(p.env, o)
		}
		p.mu.Lock()
		p.policies[o.Name] = c
		p.rebindLocked()
		p.mu.Unlock()
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		p.mu.Lock()
		defer p.mu.Unlock()
		if ev.Type == watch.Deleted {
			delete(p.bindings, o.Name)
		} else if ev.Type == watch.Added || ev.Type == watch.Modified {
			p.bindings[o.Name] = o
		}
		p.rebindLocked()
	}
}

// ResetPolicies forgets the policies before their state is applied again.
func (p *Plugin) ResetPolicies() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.policies = map[string]*compiledPolicy{}
	p.rebindLocked()
}

// ResetBindings forgets the bindings before their state is applied again.
func (p *Plugin) ResetBindings() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bindings = map[string]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	p.rebindLocked()
}

// hook is a policy with the bindings that name it.
type hook struct {
	policy   *compiledPolicy
	bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// hooks returns every bound policy, in name order. The slice is shared:
// callers only read it.
func (p *Plugin) hooks() []hook {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.bound
}

// rebindLocked recomputes p.bound; p.mu is held.
func (p *Plugin) rebindLocked() {
	p.bound = nil
	if len(p.bindings) == 0 || len(p.policies) == 0 {
		return
	}
	byPolicy := map[string][]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for _, b := range p.bindings {
		if _, ok := p.policies[b.Spec.PolicyName]; ok {
			byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
		}
	}
	out := make([]hook, 0, len(byPolicy))
	for name, bs := range byPolicy {
		sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
		out = append(out, hook{policy: p.policies[name], bindings: bs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].policy.policy.Name < out[j].policy.policy.Name })
	p.bound = out
}

// denial is one reason to refuse the request.
type denial struct {
	policy, binding string
	message         string
	reason          metav1.StatusReason
}

// exempt: as upstream, policies never apply to the admissionregistration
// resources themselves, so a bad policy can always be removed.
func exempt(a *admission.Attributes) bool {
	return a.Resource.Group == "admissionregistration.k8s.io"
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	hooks := p.hooks()
	if len(hooks) == 0 {
		return nil
	}
	r := &request{plugin: p, a: a}
	var denials []denial
	for _, h := range hooks {
		denials = append(denials, r.dispatch(ctx, h)...)
	}
	if len(denials) == 0 {
		return nil
	}
	return denialError(a, denials[0])
}

// configError is a policy or binding that cannot be applied: it denies
// unless the policy's failurePolicy is Ignore.
func configError(c *compiledPolicy, binding string, err error) []denial {
	if c.failurePolicy() == admissionregistrationv1.Ignore {
		return nil
	}
	what := "policy"
	if binding != "" {
		what = "binding"
	}
	return []denial{{policy: c.policy.Name, binding: binding, message: fmt.Sprintf("failed to configure %s: %v", what, err)}}
}

// dispatch evaluates one policy through each of its matching bindings.
func (r *request) dispatch(ctx context.Context, h hook) []denial {
	c := h.policy
	ok, err := matchResources(ctx, c.policy.Spec.MatchConstraints, r.a, r.namespaceLabels, true)
	if err != nil {
		return configError(c, "", err)
	}
	if !ok {
		return nil
	}
	if c.err != nil {
		return configError(c, "", c.err)
	}
	var out []denial
	for _, b := range h.bindings {
		ok, err := matchResources(ctx, b.Spec.MatchResources, r.a, r.namespaceLabels, false)
		if err != nil {
			out = append(out, configError(c, b.Name, err)...)
			continue
		}
		if !ok {
			continue
		}
		out = append(out, r.bind(ctx, c, b)...)
	}
	return out
}

// bind evaluates the policy once per parameter object of the binding and
// acts on the failures with the binding's validationActions.
func (r *request) bind(ctx context.Context, c *compiledPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) []denial {
	params, err := r.params(ctx, c.policy, b)
	if err != nil {
		return configError(c, b.Name, err)
	}
	base, err := r.activation(ctx)
	if err != nil {
		return configError(c, b.Name, err)
	}
	var out []denial
	for _, param := range params {
		act := *base
		act.Params = param
		res := evaluate(ctx, c, &act)
		for _, d := range res.failures {
			out = append(out, r.takeActions(ctx, c, b, d)...)
		}
		for _, ann := range res.annotations {
			admission.AddAuditAnnotation(ctx, c.policy.Name+"/"+ann.key, ann.value)
		}
	}
	return out
}

// act applies the binding's validationActions to one failed validation.
func (r *request) takeActions(ctx context.Context, c *compiledPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, f failure) []denial {
	var out []denial
	for _, action := range b.Spec.ValidationActions {
		switch action {
		case admissionregistrationv1.Deny:
			out = append(out, denial{policy: c.policy.Name, binding: b.Name, message: f.message, reason: f.reason})
		case admissionregistrationv1.Warn:
			admission.AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", c.policy.Name, b.Name, f.message))
		case admissionregistrationv1.Audit:
			value, err := json.Marshal([]validationFailureValue{{
				Message: f.message, Policy: c.policy.Name, Binding: b.Name, ExpressionIndex: f.index, ValidationActions: b.Spec.ValidationActions,
			}})
			if err != nil {
				klog.FromContext(ctx).Error(err, "encoding the validation failure annotation", "policy", c.policy.Name, "binding", b.Name)
				continue
			}
			admission.AddAuditAnnotation(ctx, ValidationFailureAnnotation, string(value))
		}
	}
	return out
}

// validationFailureValue is upstream's JSON of the validation_failure
// audit annotation.
type validationFailureValue struct {
	Message           string                                     `json:"message"`
	Policy            string                                     `json:"policy"`
	Binding           string                                     `json:"binding"`
	ExpressionIndex   int                                        `json:"expressionIndex"`
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

// denialError is upstream's Status for a denied request: the admission
// Forbidden wording, with the validation's reason (Invalid by default) and
// its code, and the message as the one cause.
func denialError(a *admission.Attributes, d denial) error {
	var message string
	if d.binding != "" {
		message = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	} else {
		message = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	err := apierrors.NewForbidden(a.Resource.GroupResource(), forbiddenName(a), errors.New(message))
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	err.ErrStatus.Reason = reason
	err.ErrStatus.Code = reasonToCode(reason)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: message})
	return err
}

// forbiddenName is the name upstream's admission.NewForbidden gives: the
// request's (a CONNECT request's pod, node or service), else the
// object's name, else its generateName, else "Unknown" (a DELETE has no
// object); an object without metadata is "Unknown/errorGettingName".
func forbiddenName(a *admission.Attributes) string {
	if a.Name != "" {
		return a.Name
	}
	if a.Object != nil {
		m, err := meta.Accessor(a.Object)
		if err != nil {
			return "Unknown/errorGettingName"
		}
		if m.GetName() != "" {
			return m.GetName()
		}
		if m.GetGenerateName() != "" {
			return m.GetGenerateName()
		}
	}
	return "Unknown"
}

func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return 403
	case metav1.StatusReasonUnauthorized:
		return 401
	case metav1.StatusReasonRequestEntityTooLarge:
		return 413
	}
	return 422
}
