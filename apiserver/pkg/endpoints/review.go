package endpoints

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
)

// AuthorizeFunc answers an access review with the server's authorizer.
type AuthorizeFunc func(ctx context.Context, a authz.Attributes) (allowed bool, reason string, err error)

// ReviewResource is a create-only resource of authorization.k8s.io/v1 that
// answers "can this user do that?" (kubectl auth can-i).
type ReviewResource struct {
	Resource, Kind string
	Namespaced     bool
}

// ReviewResources lists them, for discovery.
var ReviewResources = []ReviewResource{
	{"localsubjectaccessreviews", "LocalSubjectAccessReview", true},
	{"selfsubjectaccessreviews", "SelfSubjectAccessReview", false},
	{"subjectaccessreviews", "SubjectAccessReview", false},
}

// InstallReviews adds the access review endpoints.
func (h *Handler) InstallReviews(r *mux.Router, authorize AuthorizeFunc) {
	root := "/apis/authorization.k8s.io/v1"
	for _, rr := range ReviewResources {
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
}

func (h *Handler) review(w http.ResponseWriter, r *http.Request, authorize AuthorizeFunc, rr ReviewResource, namespace string) {
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
