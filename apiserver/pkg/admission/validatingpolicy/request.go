package validatingpolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/celpolicy"
)

// request is one admission request while the policies are evaluated; it
// converts the objects and reads the namespace once.
type request struct {
	plugin *Plugin
	a      *admission.Attributes

	base *celpolicy.Activation
	ns   *corev1.Namespace
}

// namespace reads the request's namespace once (nil for cluster-scoped
// requests and for a namespace itself, as upstream).
func (r *request) namespace(ctx context.Context) (*corev1.Namespace, error) {
	if r.ns != nil || r.a.Namespace == "" || (r.a.Resource.Group == "" && r.a.Resource.Resource == "namespaces") {
		return r.ns, nil
	}
	ns, err := r.plugin.cfg.Namespace(ctx, r.a.Namespace)
	if err != nil {
		return nil, fmt.Errorf("reading namespace %q: %w", r.a.Namespace, err)
	}
	r.ns = ns
	return ns, nil
}

func (r *request) namespaceLabels(ctx context.Context, name string) (map[string]string, error) {
	ns, err := r.namespace(ctx)
	if err != nil || ns == nil {
		return nil, err
	}
	return ns.Labels, nil
}

// activation builds (once) the variables every expression of this request
// sees, params aside.
func (r *request) activation(ctx context.Context) (*celpolicy.Activation, error) {
	if r.base != nil {
		return r.base, nil
	}
	var err error
	act := &celpolicy.Activation{}
	if act.Object, err = toMap(r.a.Object, r.a.Kind.GroupVersion().String(), r.a.Kind.Kind); err != nil {
		return nil, err
	}
	if act.OldObject, err = toMap(r.a.OldObject, r.a.Kind.GroupVersion().String(), r.a.Kind.Kind); err != nil {
		return nil, err
	}
	if act.Request, err = runtime.DefaultUnstructuredConverter.ToUnstructured(admissionRequest(r.a)); err != nil {
		return nil, err
	}
	act.RequestResource = celpolicy.AuthzRequest{ResourceRequest: true, Group: r.a.Resource.Group, Resource: r.a.Resource.Resource,
		Subresource: r.a.Subresource, Namespace: r.a.Namespace, Name: r.a.Name}
	if az := r.plugin.cfg.Authorizer; az != nil {
		act.Authorize = authorizeAs(az, r.a.User)
	}
	ns, err := r.namespace(ctx)
	if err != nil {
		return nil, err
	}
	if ns != nil {
		if act.NamespaceObject, err = toMap(ns, "v1", "Namespace"); err != nil {
			return nil, err
		}
	}
	r.base = act
	return act, nil
}

// authorizeAs answers the CEL authorizer library's checks for user, or
// for the service account a check names (with the groups upstream gives a
// service account's token).
func authorizeAs(az authz.Authorizer, user *authn.User) celpolicy.AuthorizeFunc {
	return func(ctx context.Context, q celpolicy.AuthzRequest) (bool, string, error) {
		u := user
		if q.ServiceAccount != "" {
			ns, name, _ := strings.Cut(q.ServiceAccount, "/")
			u = &authn.User{
				Name:   "system:serviceaccount:" + ns + ":" + name,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			}
		}
		if u == nil {
			return false, "", fmt.Errorf("the request has no user")
		}
		d, reason, err := az.Authorize(ctx, authz.Attributes{
			User: u, Verb: q.Verb, ResourceRequest: q.ResourceRequest, APIGroup: q.Group, APIVersion: "*",
			Resource: q.Resource, Subresource: q.Subresource, Namespace: q.Namespace, Name: q.Name, Path: q.Path,
		})
		return d == authz.Allow, reason, err
	}
}

// toMap converts obj to the map CEL sees, with apiVersion and kind set
// (typed objects read from storage do not carry them). nil stays nil.
func toMap(obj runtime.Object, apiVersion, kind string) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting the %s for CEL: %w", kind, err)
	}
	if _, ok := m["apiVersion"]; !ok && apiVersion != "" {
		m["apiVersion"] = apiVersion
	}
	if _, ok := m["kind"]; !ok && kind != "" {
		m["kind"] = kind
	}
	return m, nil
}

// admissionRequest is the `request` variable: upstream's AdmissionRequest
// without the objects.
func admissionRequest(a *admission.Attributes) *admissionv1.AdmissionRequest {
	kind := metav1.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind}
	res := metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
	dry := a.DryRun
	req := &admissionv1.AdmissionRequest{
		Kind: kind, Resource: res, SubResource: a.Subresource,
		RequestKind: &kind, RequestResource: &res, RequestSubResource: a.Subresource,
		Name: a.Name, Namespace: a.Namespace, Operation: admissionv1.Operation(a.Operation), DryRun: &dry,
	}
	if a.User != nil {
		req.UserInfo = authenticationv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
	}
	return req
}

// params returns the parameter objects of the binding: one nil entry when
// the policy has no paramKind, or when none is found and the binding
// allows that.
func (r *request) params(ctx context.Context, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) ([]map[string]any, error) {
	pk := p.Spec.ParamKind
	if pk == nil {
		return []map[string]any{nil}, nil
	}
	ref := b.Spec.ParamRef
	if ref == nil {
		return nil, fmt.Errorf("paramKind kind `%s` is set but paramRef is nil", pk.Kind)
	}
	group, resource, namespaced, ok := r.plugin.cfg.Kinds(pk.APIVersion, pk.Kind)
	if !ok {
		return nil, fmt.Errorf("failed to find resource referenced by paramKind: '%s, Kind=%s'", pk.APIVersion, pk.Kind)
	}
	namespace := ""
	if !namespaced && ref.Namespace != "" {
		return nil, fmt.Errorf("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	if namespaced {
		namespace = ref.Namespace
		if namespace == "" {
			namespace = r.a.Namespace
		}
		if namespace == "" {
			return nil, errors.New("cannot use a namespaced paramRef without a namespace in a binding that matches cluster-scoped resources")
		}
	}
	objs, err := r.findParams(ctx, group, resource, namespace, ref)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		if ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
			return nil, fmt.Errorf("no params found for policy binding with `Deny` parameterNotFoundAction")
		}
		return []map[string]any{nil}, nil
	}
	out := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		m, err := toMap(o, pk.APIVersion, pk.Kind)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (r *request) findParams(ctx context.Context, group, resource, namespace string, ref *admissionregistrationv1.ParamRef) ([]runtime.Object, error) {
	objects := r.plugin.cfg.Objects
	if ref.Name != "" {
		obj, err := objects.Get(ctx, group, resource, namespace, ref.Name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []runtime.Object{obj}, nil
	}
	sel := labels.Everything()
	if ref.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		sel = s
	}
	all, err := objects.List(ctx, group, resource, namespace)
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, o := range all {
		if m, err := meta.Accessor(o); err == nil && sel.Matches(labels.Set(m.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}
