package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/celpolicy"
	"skiff.dev/apiserver/pkg/webhook"
)

// Plugin names, as upstream's.
const (
	MutatingWebhookName   = "MutatingAdmissionWebhook"
	ValidatingWebhookName = "ValidatingAdmissionWebhook"
)

// ServiceResolver turns a webhook's service reference into a URL and the
// TLS server name to check.
type ServiceResolver = webhook.ServiceResolver

// Webhooks calls users' admission webhooks, as upstream's
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook do, from the
// configurations it is fed (Apply).
type Webhooks struct {
	mu         sync.RWMutex
	mutating   map[string]*admissionregistrationv1.MutatingWebhookConfiguration
	validating map[string]*admissionregistrationv1.ValidatingWebhookConfiguration
	clients    *webhook.Clients
	// mutatingHooks and validatingHooks are the webhooks of the
	// configurations in call order, with their selectors parsed; rebuilt
	// when a configuration changes, so a request only reads them.
	mutatingHooks, validatingHooks []hook
	// env compiles the webhooks' matchConditions (made when first needed).
	env    *celpolicy.Env
	envErr error

	// Labels returns a namespace's labels, for namespaceSelector.
	Labels func(ctx context.Context, namespace string) (map[string]string, error)
}

// NewWebhooks returns the shared state of both webhook plugins.
func NewWebhooks(labels func(ctx context.Context, namespace string) (map[string]string, error), resolve ServiceResolver) *Webhooks {
	return &Webhooks{
		mutating:   map[string]*admissionregistrationv1.MutatingWebhookConfiguration{},
		validating: map[string]*admissionregistrationv1.ValidatingWebhookConfiguration{},
		clients:    &webhook.Clients{Resolve: resolve},
		Labels:     labels,
	}
}

// Apply records a webhook configuration watch event.
func (w *Webhooks) Apply(ev watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch o := ev.Object.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		if ev.Type == watch.Deleted {
			delete(w.mutating, o.Name)
		} else if ev.Type == watch.Added || ev.Type == watch.Modified {
			w.mutating[o.Name] = o
		}
		w.mutatingHooks = w.buildHooks(true)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		if ev.Type == watch.Deleted {
			delete(w.validating, o.Name)
		} else if ev.Type == watch.Added || ev.Type == watch.Modified {
			w.validating[o.Name] = o
		}
		w.validatingHooks = w.buildHooks(false)
	}
}

// Reset forgets one kind of configuration before its state is applied again.
func (w *Webhooks) Reset(mutating bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if mutating {
		w.mutating = map[string]*admissionregistrationv1.MutatingWebhookConfiguration{}
		w.mutatingHooks = nil
	} else {
		w.validating = map[string]*admissionregistrationv1.ValidatingWebhookConfiguration{}
		w.validatingHooks = nil
	}
}

// hook is one webhook to call, whichever its kind.
type hook struct {
	name          string
	config        admissionregistrationv1.WebhookClientConfig
	rules         []admissionregistrationv1.RuleWithOperations
	failurePolicy admissionregistrationv1.FailurePolicyType
	// namespaceSelector and objectSelector are nil when they select
	// everything; a selector that does not parse is its error, reported
	// when a request the rules match meets it.
	namespaceSelector, objectSelector       labels.Selector
	namespaceSelectorErr, objectSelectorErr error
	timeout                                 time.Duration
	// matchConditions are the webhook's, compiled; matchConditionsErr is
	// a condition that does not compile (the API refuses those, so only a
	// configuration stored by other means has one), reported as an
	// evaluation error.
	matchConditions    []celpolicy.NamedProgram
	matchConditionsErr error
}

// hooks returns the webhooks of one kind in call order. The slice is
// shared: callers only read it.
func (w *Webhooks) hooks(mutating bool) []hook {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if mutating {
		return w.mutatingHooks
	}
	return w.validatingHooks
}

// buildHooks lists the webhooks of one kind, configurations in name order;
// w.mu is held.
func (w *Webhooks) buildHooks(mutating bool) []hook {
	var names []string
	if mutating {
		for n := range w.mutating {
			names = append(names, n)
		}
	} else {
		for n := range w.validating {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []hook
	mk := func(name string, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations, fp *admissionregistrationv1.FailurePolicyType, ns, obj *metav1.LabelSelector, t *int32, conds []admissionregistrationv1.MatchCondition) hook {
		h := hook{name: name, config: cc, rules: rules, failurePolicy: admissionregistrationv1.Fail, timeout: 10 * time.Second}
		h.matchConditions, h.matchConditionsErr = w.compileMatchConditions(conds)
		h.namespaceSelector, h.namespaceSelectorErr = parseSelector(ns)
		h.objectSelector, h.objectSelectorErr = parseSelector(obj)
		if fp != nil {
			h.failurePolicy = *fp
		}
		if t != nil {
			h.timeout = time.Duration(*t) * time.Second
		}
		return h
	}
	for _, n := range names {
		if mutating {
			for _, wh := range w.mutating[n].Webhooks {
				out = append(out, mk(wh.Name, wh.ClientConfig, wh.Rules, wh.FailurePolicy, wh.NamespaceSelector, wh.ObjectSelector, wh.TimeoutSeconds, wh.MatchConditions))
			}
		} else {
			for _, wh := range w.validating[n].Webhooks {
				out = append(out, mk(wh.Name, wh.ClientConfig, wh.Rules, wh.FailurePolicy, wh.NamespaceSelector, wh.ObjectSelector, wh.TimeoutSeconds, wh.MatchConditions))
			}
		}
	}
	return out
}

// compileMatchConditions compiles a webhook's matchConditions; w.mu is
// held.
func (w *Webhooks) compileMatchConditions(conds []admissionregistrationv1.MatchCondition) ([]celpolicy.NamedProgram, error) {
	if len(conds) == 0 {
		return nil, nil
	}
	if w.env == nil && w.envErr == nil {
		w.env, w.envErr = celpolicy.NewEnv()
	}
	if w.envErr != nil {
		return nil, w.envErr
	}
	out := make([]celpolicy.NamedProgram, 0, len(conds))
	for i, c := range conds {
		prg, err := w.env.Compile(c.Expression, celpolicy.MatchCondition)
		if err != nil {
			return nil, fmt.Errorf("matchConditions[%d].expression: %v", i, err)
		}
		out = append(out, celpolicy.NamedProgram{Name: c.Name, Program: prg})
	}
	return out, nil
}

// conditionsMatch evaluates a webhook's matchConditions as upstream: any
// false skips the webhook; else an error of any is the result; else it is
// called.
func conditionsMatch(ctx context.Context, h hook, a *Attributes) (bool, error) {
	if h.matchConditionsErr != nil {
		return false, h.matchConditionsErr
	}
	if len(h.matchConditions) == 0 {
		return true, nil
	}
	act := &celpolicy.Activation{}
	var err error
	toMap := func(obj runtime.Object) (map[string]any, error) {
		if obj == nil || reflect.ValueOf(obj).IsNil() {
			return nil, nil
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		if _, ok := m["apiVersion"]; !ok {
			m["apiVersion"] = a.Kind.GroupVersion().String()
		}
		if _, ok := m["kind"]; !ok {
			m["kind"] = a.Kind.Kind
		}
		return m, nil
	}
	if act.Object, err = toMap(a.Object); err != nil {
		return false, err
	}
	if act.OldObject, err = toMap(a.OldObject); err != nil {
		return false, err
	}
	if act.Request, err = runtime.DefaultUnstructuredConverter.ToUnstructured(admissionRequest(a)); err != nil {
		return false, err
	}
	act.RequestResource = celpolicy.AuthzRequest{ResourceRequest: true, Group: a.Resource.Group, Resource: a.Resource.Resource,
		Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name}
	var firstErr error
	for _, mc := range h.matchConditions {
		ok, err := mc.Program.EvalBool(ctx, act)
		switch {
		case err != nil:
			if firstErr == nil {
				firstErr = fmt.Errorf("matchCondition %q: %v", mc.Name, err)
			}
		case !ok:
			return false, nil
		}
	}
	return firstErr == nil, firstErr
}

// parseSelector parses a webhook's selector; nil (and no error) when it
// selects everything (absent or empty).
func parseSelector(sel *metav1.LabelSelector) (labels.Selector, error) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return nil, nil
	}
	return metav1.LabelSelectorAsSelector(sel)
}

func matches(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// ruleMatches is upstream's rule matching: "*" matches every resource but
// no subresource, "*/*" everything, "pods/*" every subresource of pods.
func ruleMatches(r admissionregistrationv1.RuleWithOperations, a *Attributes) bool {
	if !matchesOperation(r.Operations, a.Operation) || !matches(r.APIGroups, a.Resource.Group) || !matches(r.APIVersions, a.Resource.Version) {
		return false
	}
	resOK := false
	for _, res := range r.Resources {
		resource, sub, hasSub := strings.Cut(res, "/")
		switch {
		case !hasSub:
			resOK = a.Subresource == "" && (res == "*" || res == a.Resource.Resource)
		default:
			resOK = (resource == "*" || resource == a.Resource.Resource) && (sub == "*" || sub == a.Subresource)
		}
		if resOK {
			break
		}
	}
	if !resOK {
		return false
	}
	scope := admissionregistrationv1.AllScopes
	if r.Scope != nil {
		scope = *r.Scope
	}
	switch scope {
	case admissionregistrationv1.ClusterScope:
		return a.Namespace == "" || a.Resource.Resource == "namespaces"
	case admissionregistrationv1.NamespacedScope:
		return a.Namespace != "" && a.Resource.Resource != "namespaces"
	}
	return true
}

// matchesOperation: the rule names the operation, or "*".
func matchesOperation(ops []admissionregistrationv1.OperationType, op Operation) bool {
	for _, o := range ops {
		if o == admissionregistrationv1.OperationAll || string(o) == string(op) {
			return true
		}
	}
	return false
}

func objLabels(obj runtime.Object) map[string]string {
	l, _ := LabelsOf(obj)
	return l
}

// LabelsOf returns an object's labels; ok is false for no object, or one
// without metadata (a CONNECT request's options).
func LabelsOf(obj runtime.Object) (l map[string]string, ok bool) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	return m.GetLabels(), true
}

// ObjectSelected is upstream's objectSelector match: the new or the old
// object has labels the selector matches. An absent object, or one
// without metadata (a CONNECT request's options), matches no selector.
func ObjectSelected(s labels.Selector, a *Attributes) bool {
	for _, obj := range []runtime.Object{a.Object, a.OldObject} {
		if l, ok := LabelsOf(obj); ok && s.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}

func (w *Webhooks) selected(ctx context.Context, h hook, a *Attributes) (bool, error) {
	matched := false
	for _, r := range h.rules {
		if ruleMatches(r, a) {
			matched = true
			break
		}
	}
	if !matched {
		return false, nil
	}
	if h.objectSelectorErr != nil {
		return false, h.objectSelectorErr
	}
	if s := h.objectSelector; s != nil && !ObjectSelected(s, a) {
		return false, nil
	}
	if h.namespaceSelectorErr != nil {
		return false, h.namespaceSelectorErr
	}
	if s := h.namespaceSelector; s != nil {
		var nsLabels map[string]string
		var err error
		switch {
		case a.Resource.Resource == "namespaces" && a.Resource.Group == "":
			nsLabels = objLabels(a.Object)
			if nsLabels == nil {
				nsLabels = objLabels(a.OldObject)
			}
		case a.Namespace != "":
			if nsLabels, err = w.Labels(ctx, a.Namespace); err != nil {
				return false, err
			}
		default:
			// Upstream: a cluster-scoped request other than a
			// namespace's (nodes/proxy, ...) is never exempted.
			return true, nil
		}
		if !s.Matches(labels.Set(nsLabels)) {
			return false, nil
		}
	}
	return true, nil
}

// exempt: webhooks never see webhook configurations (so a broken webhook
// can always be removed), nor access reviews.
func exempt(a *Attributes) bool {
	return a.Resource.Group == "admissionregistration.k8s.io" || a.Resource.Group == "authorization.k8s.io"
}

// call sends one AdmissionReview and returns the webhook's response.
func (w *Webhooks) call(ctx context.Context, h hook, a *Attributes) (*admissionv1.AdmissionResponse, error) {
	req := admissionRequest(a)
	var err error
	if a.Object != nil {
		if req.Object.Raw, err = json.Marshal(a.Object); err != nil {
			return nil, err
		}
	}
	if a.OldObject != nil {
		if req.OldObject.Raw, err = json.Marshal(a.OldObject); err != nil {
			return nil, err
		}
	}
	return w.post(ctx, h, req)
}

// admissionRequest is the AdmissionRequest of a, without its objects.
func admissionRequest(a *Attributes) *admissionv1.AdmissionRequest {
	req := &admissionv1.AdmissionRequest{
		UID:         typesUID(uuid.NewString()),
		Kind:        metav1.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind},
		Resource:    metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource},
		SubResource: a.Subresource, Name: a.Name, Namespace: a.Namespace, Operation: admissionv1.Operation(a.Operation),
		DryRun: &a.DryRun,
	}
	req.RequestKind, req.RequestResource, req.RequestSubResource = &req.Kind, &req.Resource, a.Subresource
	if a.User != nil {
		req.UserInfo = authenticationv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
	}
	return req
}

// post sends req to the webhook h and returns its response.
func (w *Webhooks) post(ctx context.Context, h hook, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	data, err := w.clients.Post(ctx, endpoint(h.config), body, h.timeout)
	if err != nil {
		return nil, err
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("the webhook's answer is not an AdmissionReview: %v", err)
	}
	if out.Response == nil {
		return nil, fmt.Errorf("the webhook's AdmissionReview has no response")
	}
	if out.Response.UID != req.UID {
		return nil, fmt.Errorf("the webhook answered for uid %q, expected %q", out.Response.UID, req.UID)
	}
	return out.Response, nil
}

// endpoint is where a webhook of a configuration is reached.
func endpoint(c admissionregistrationv1.WebhookClientConfig) webhook.Endpoint {
	e := webhook.Endpoint{URL: c.URL, CABundle: c.CABundle}
	if c.Service != nil {
		e.Namespace, e.Name, e.Port, e.Path = c.Service.Namespace, c.Service.Name, c.Service.Port, c.Service.Path
	}
	return e
}

// denied is upstream's error for a webhook that refused a request.
func denied(name string, result *metav1.Status) error {
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", name)
	st := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		st = *result
	}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	if st.Status == "" || st.Status == metav1.StatusSuccess {
		st.Status = metav1.StatusFailure
	}
	switch {
	case st.Message != "":
		st.Message = fmt.Sprintf("%s: %s", deniedBy, st.Message)
	case st.Reason != "":
		st.Message = fmt.Sprintf("%s: %s", deniedBy, st.Reason)
	default:
		st.Message = deniedBy + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: st}
}

// run calls every matching webhook of one kind in order.
func (w *Webhooks) run(ctx context.Context, a *Attributes, mutating bool) error {
	if exempt(a) {
		return nil
	}
	for _, h := range w.hooks(mutating) {
		ok, err := w.selected(ctx, h, a)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("matching webhook %q: %v", h.name, err))
		}
		if !ok {
			continue
		}
		if ok, err = conditionsMatch(ctx, h, a); err != nil {
			if h.failurePolicy == admissionregistrationv1.Ignore {
				klog.FromContext(ctx).Info("ignoring a webhook whose match conditions failed (failurePolicy Ignore)", "webhook", h.name, "err", err)
				continue
			}
			return apierrors.NewInternalError(fmt.Errorf("failed to evaluate match conditions of webhook %q: %v", h.name, err))
		}
		if !ok {
			continue
		}
		resp, err := w.call(ctx, h, a)
		if err != nil {
			if h.failurePolicy == admissionregistrationv1.Ignore {
				klog.FromContext(ctx).Info("ignoring a failed webhook (failurePolicy Ignore)", "webhook", h.name, "err", err)
				continue
			}
			return apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %v", h.name, err))
		}
		if !resp.Allowed {
			return denied(h.name, resp.Result)
		}
		if mutating && len(resp.Patch) > 0 {
			if err := applyWebhookPatch(a, resp); err != nil {
				return apierrors.NewInternalError(fmt.Errorf("webhook %q: %v", h.name, err))
			}
		}
	}
	return nil
}

// applyWebhookPatch applies a JSONPatch response to the object in place.
func applyWebhookPatch(a *Attributes, resp *admissionv1.AdmissionResponse) error {
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		return fmt.Errorf("unsupported patch type %v", resp.PatchType)
	}
	if a.Object == nil {
		return fmt.Errorf("a patch for a request without an object")
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return fmt.Errorf("decoding the patch: %v", err)
	}
	cur, err := json.Marshal(a.Object)
	if err != nil {
		return err
	}
	patched, err := patch.Apply(cur)
	if err != nil {
		return fmt.Errorf("applying the patch: %v", err)
	}
	fresh := reflect.New(reflect.TypeOf(a.Object).Elem()).Interface()
	if err := json.Unmarshal(patched, fresh); err != nil {
		return fmt.Errorf("the patched object does not decode: %v", err)
	}
	reflect.ValueOf(a.Object).Elem().Set(reflect.ValueOf(fresh).Elem())
	a.Patched = true
	return nil
}

// MutatingWebhooks is the MutatingAdmissionWebhook plugin.
type MutatingWebhooks struct{ *Webhooks }

// Name implements Plugin.
func (MutatingWebhooks) Name() string { return MutatingWebhookName }

// Admit implements MutationInterface.
func (m MutatingWebhooks) Admit(ctx context.Context, a *Attributes) error { return m.run(ctx, a, true) }

// ValidatingWebhooks is the ValidatingAdmissionWebhook plugin.
type ValidatingWebhooks struct{ *Webhooks }

// Name implements Plugin.
func (ValidatingWebhooks) Name() string { return ValidatingWebhookName }

// Validate implements ValidationInterface.
func (v ValidatingWebhooks) Validate(ctx context.Context, a *Attributes) error {
	return v.run(ctx, a, false)
}

func typesUID(s string) types.UID { return types.UID(s) }
