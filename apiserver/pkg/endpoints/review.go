package endpoints

import (
	"context"
	"net/http"
	"slices"

	"github.com/gorilla/mux"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
)

// AuthorizeFunc answers an access review with the server's authorizer.
type AuthorizeFunc func(ctx context.Context, a authz.Attributes) (allowed bool, reason string, err error)

// RulesFunc lists what the server's authorizers allow a user in a
// namespace.
type RulesFunc func(ctx context.Context, u *authn.User, namespace string) (authz.Rules, error)

// CreateOnlyResource is a resource that is answered, not stored: a POST
// asks a question about the caller or another user (may they do that: the
// access reviews of authorization.k8s.io/v1, kubectl auth can-i; what may
// they do: SelfSubjectRulesReview, kubectl auth can-i --list; who are they:
// authentication.k8s.io/v1) or, for core v1's bindings, binds a pod.
type CreateOnlyResource struct {
	Resource, Kind string
	Namespaced     bool
}

var (
	// accessReviews are the reviews of one request.
	accessReviews = []CreateOnlyResource{
		{"localsubjectaccessreviews", "LocalSubjectAccessReview", true},
		{"selfsubjectaccessreviews", "SelfSubjectAccessReview", false},
		{"subjectaccessreviews", "SubjectAccessReview", false},
	}
	// SelfSubjectRulesReviewResource lists the caller's rules in a namespace.
	SelfSubjectRulesReviewResource = CreateOnlyResource{"selfsubjectrulesreviews", "SelfSubjectRulesReview", false}
	// ReviewResources are authorization.k8s.io/v1's resources, for
	// discovery.
	ReviewResources = append(slices.Clone(accessReviews), SelfSubjectRulesReviewResource)
)

// InstallReviews adds the endpoints of authorization.k8s.io/v1: the access
// reviews, answered by authorize, and the rules review, by rules.
func (h *Handler) InstallReviews(r *mux.Router, authorize AuthorizeFunc, rules RulesFunc) {
	root := "/apis/authorization.k8s.io/v1"
	for _, rr := range accessReviews {
		rr := rr
		path := root + "/" + rr.Resource
		if rr.Namespaced {
			path = root + "/namespaces/{namespace}/" + rr.Resource
		}
		r.HandleFunc(path, func(w http.ResponseWriter, req *http.Request) {
			h.withoutTables(func(w http.ResponseWriter, req *http.Request) {
				h.review(w, req, authorize, rr, mux.Vars(req)["namespace"])
			})(w, req)
		}).Methods(http.MethodPost)
	}
	r.HandleFunc(root+"/"+SelfSubjectRulesReviewResource.Resource, h.withoutTables(func(w http.ResponseWriter, req *http.Request) {
		h.rulesReview(w, req, rules)
	})).Methods(http.MethodPost)
}

// rulesReview answers a SelfSubjectRulesReview as upstream's REST does:
// the namespace is required (400 without it), and the answer holds only
// the status, with what could not be resolved in its evaluationError.
func (h *Handler) rulesReview(w http.ResponseWriter, r *http.Request, resolve RulesFunc) {
	gvk := authorizationv1.SchemeGroupVersion.WithKind(SelfSubjectRulesReviewResource.Kind)
	gr := schema.GroupResource{Group: gvk.Group, Resource: SelfSubjectRulesReviewResource.Resource}
	setRequestInfo(r, &RequestInfo{Verb: "create", Group: gvk.Group, Version: gvk.Version, Resource: gr.Resource, Scope: "cluster"})
	fail := func(err error) { h.writeError(w, r, err, gr, "") }
	data, err := readBody(r)
	if err != nil {
		fail(err)
		return
	}
	obj, err := h.decodeBody(w, r, data, gvk, &authorizationv1.SelfSubjectRulesReview{})
	if err != nil {
		fail(err)
		return
	}
	u, ok := authn.UserFrom(r.Context())
	if !ok || u == nil {
		fail(apierrors.NewBadRequest("no user present on request"))
		return
	}
	namespace := obj.(*authorizationv1.SelfSubjectRulesReview).Spec.Namespace
	if namespace == "" {
		fail(apierrors.NewBadRequest("no namespace on request"))
		return
	}
	rules, err := resolve(r.Context(), u, namespace)
	out := &authorizationv1.SelfSubjectRulesReview{
		TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind},
		Status: authorizationv1.SubjectRulesReviewStatus{
			// Empty lists, not null, as upstream's.
			ResourceRules:    append([]authorizationv1.ResourceRule{}, rules.Resource...),
			NonResourceRules: append([]authorizationv1.NonResourceRule{}, rules.NonResource...),
			Incomplete:       rules.Incomplete,
		},
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	h.respond(w, r, http.StatusCreated, out, false)
}

func (h *Handler) review(w http.ResponseWriter, r *http.Request, authorize AuthorizeFunc, rr CreateOnlyResource, namespace string) {
	gvk := authorizationv1.SchemeGroupVersion.WithKind(rr.Kind)
	gr := schema.GroupResource{Group: "authorization.k8s.io", Resource: rr.Resource}
	setRequestInfo(r, &RequestInfo{Verb: "create", Group: gvk.Group, Version: gvk.Version, Resource: rr.Resource, Scope: "cluster", Namespace: namespace})
	fail := func(err error) { h.writeError(w, r, err, gr, "") }
	data, err := readBody(r)
	if err != nil {
		fail(err)
		return
	}
	var (
		into    runtime.Object
		spec    authorizationv1.SubjectAccessReviewSpec
		subject *authn.User
		status  *authorizationv1.SubjectAccessReviewStatus
	)
	switch rr.Kind {
	case "SelfSubjectAccessReview":
		into = &authorizationv1.SelfSubjectAccessReview{}
	case "SubjectAccessReview":
		into = &authorizationv1.SubjectAccessReview{}
	default:
		into = &authorizationv1.LocalSubjectAccessReview{}
	}
	obj, err := h.decodeBody(w, r, data, gvk, into)
	if err != nil {
		fail(err)
		return
	}
	switch o := obj.(type) {
	case *authorizationv1.SelfSubjectAccessReview:
		subject, _ = authn.UserFrom(r.Context())
		spec = authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: o.Spec.ResourceAttributes, NonResourceAttributes: o.Spec.NonResourceAttributes}
		status = &o.Status
	case *authorizationv1.SubjectAccessReview:
		spec, status = o.Spec, &o.Status
	case *authorizationv1.LocalSubjectAccessReview:
		spec, status = o.Spec, &o.Status
		if spec.ResourceAttributes == nil || (spec.ResourceAttributes.Namespace != "" && spec.ResourceAttributes.Namespace != namespace) {
			fail(apierrors.NewInvalid(gvk.GroupKind(), "", field.ErrorList{field.Invalid(field.NewPath("spec", "resourceAttributes", "namespace"), namespace, "must match the namespace of the request")}))
			return
		}
		spec.ResourceAttributes.Namespace = namespace
	}
	if subject == nil {
		subject = &authn.User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	}
	var errs field.ErrorList
	if (spec.ResourceAttributes == nil) == (spec.NonResourceAttributes == nil) {
		errs = append(errs, field.Required(field.NewPath("spec"), "exactly one of resourceAttributes or nonResourceAttributes must be set"))
	}
	if rr.Kind != "SelfSubjectAccessReview" && spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Required(field.NewPath("spec", "user"), "at least one of user or group must be specified"))
	}
	if len(errs) > 0 {
		fail(apierrors.NewInvalid(gvk.GroupKind(), "", errs))
		return
	}
	a := authz.Attributes{User: subject}
	if ra := spec.ResourceAttributes; ra != nil {
		a.ResourceRequest = true
		a.Verb, a.APIGroup, a.APIVersion = ra.Verb, ra.Group, ra.Version
		a.Resource, a.Subresource, a.Namespace, a.Name = ra.Resource, ra.Subresource, ra.Namespace, ra.Name
	} else {
		a.Verb, a.Path = spec.NonResourceAttributes.Verb, spec.NonResourceAttributes.Path
	}
	allowed, reason, err := authorize(r.Context(), a)
	status.Allowed, status.Reason = allowed, reason
	if err != nil {
		status.EvaluationError = err.Error()
	}
	h.respond(w, r, http.StatusCreated, obj, false)
}
