package endpoints

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/authn"
)

// TokenAuthenticateFunc checks a bearer token as the server's
// authenticators do.
type TokenAuthenticateFunc func(ctx context.Context, token string) (*authn.User, error)

// TokenReviewResource and SelfSubjectReviewResource are the create-only
// resources of authentication.k8s.io/v1.
var (
	TokenReviewResource       = CreateOnlyResource{Resource: "tokenreviews", Kind: "TokenReview"}
	SelfSubjectReviewResource = CreateOnlyResource{Resource: "selfsubjectreviews", Kind: "SelfSubjectReview"}
)

// InstallTokenReview adds POST /apis/authentication.k8s.io/v1/tokenreviews,
// answered from the server's authenticators. audiences are the server's
// own: a review asking for other audiences is not authenticated.
func (h *Handler) InstallTokenReview(r *mux.Router, authenticate TokenAuthenticateFunc, audiences []string) {
	r.HandleFunc("/apis/authentication.k8s.io/v1/tokenreviews", func(w http.ResponseWriter, req *http.Request) {
		h.withoutTables(func(w http.ResponseWriter, req *http.Request) { h.tokenReview(w, req, authenticate, audiences) })(w, req)
	}).Methods(http.MethodPost)
	r.HandleFunc("/apis/authentication.k8s.io/v1/selfsubjectreviews", h.withoutTables(h.selfSubjectReview)).Methods(http.MethodPost)
}

// selfSubjectReview answers who the request authenticated as (after
// impersonation), with the user's extra, as upstream's
// `kubectl auth whoami`.
func (h *Handler) selfSubjectReview(w http.ResponseWriter, r *http.Request) {
	gvk := authenticationv1.SchemeGroupVersion.WithKind("SelfSubjectReview")
	gr := schema.GroupResource{Group: gvk.Group, Resource: "selfsubjectreviews"}
	setRequestInfo(r, &RequestInfo{Verb: "create", Group: gvk.Group, Version: gvk.Version, Resource: "selfsubjectreviews", Scope: "cluster"})
	data, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	review := &authenticationv1.SelfSubjectReview{}
	if len(data) > 0 {
		obj, err := h.decodeBody(w, r, data, gvk, review)
		if err != nil {
			h.writeError(w, r, err, gr, "")
			return
		}
		review = obj.(*authenticationv1.SelfSubjectReview)
	}
	u, ok := authn.UserFrom(r.Context())
	if !ok || u == nil {
		h.writeError(w, r, apierrors.NewUnauthorized("Unauthorized"), gr, "")
		return
	}
	review.TypeMeta = metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	review.CreationTimestamp = metav1.NewTime(time.Now().Truncate(time.Second))
	review.Status.UserInfo = userInfo(u)
	h.respond(w, r, http.StatusCreated, review, false)
}

func (h *Handler) tokenReview(w http.ResponseWriter, r *http.Request, authenticate TokenAuthenticateFunc, audiences []string) {
	gvk := authenticationv1.SchemeGroupVersion.WithKind("TokenReview")
	gr := schema.GroupResource{Group: gvk.Group, Resource: "tokenreviews"}
	setRequestInfo(r, &RequestInfo{Verb: "create", Group: gvk.Group, Version: gvk.Version, Resource: "tokenreviews", Scope: "cluster"})
	data, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	obj, err := h.decodeBody(w, r, data, gvk, &authenticationv1.TokenReview{})
	if err != nil {
		h.writeError(w, r, err, gr, "")
		return
	}
	tr := obj.(*authenticationv1.TokenReview)
	if tr.Spec.Token == "" {
		h.writeError(w, r, apierrors.NewInvalid(gvk.GroupKind(), "", field.ErrorList{field.Required(field.NewPath("spec", "token"), "")}), gr, "")
		return
	}
	tr.Status = reviewToken(r.Context(), authenticate, audiences, tr.Spec)
	h.respond(w, r, http.StatusCreated, tr, false)
}

func reviewToken(ctx context.Context, authenticate TokenAuthenticateFunc, audiences []string, spec authenticationv1.TokenReviewSpec) authenticationv1.TokenReviewStatus {
	want := spec.Audiences
	if len(want) == 0 {
		want = audiences
	}
	var matched []string
	for _, a := range want {
		for _, have := range audiences {
			if a == have {
				matched = append(matched, a)
			}
		}
	}
	if len(audiences) > 0 && len(matched) == 0 {
		return authenticationv1.TokenReviewStatus{Error: "token audiences don't match the requested audiences"}
	}
	u, err := authenticate(ctx, spec.Token)
	if err != nil || u == nil {
		msg := "invalid bearer token"
		if err != nil {
			msg = err.Error()
		}
		return authenticationv1.TokenReviewStatus{Error: msg}
	}
	return authenticationv1.TokenReviewStatus{
		Authenticated: true,
		User:          userInfo(u),
		Audiences:     matched,
	}
}

// userInfo is u as authentication.k8s.io/v1 reports it.
func userInfo(u *authn.User) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: append([]string(nil), u.Groups...)}
	if len(u.Extra) > 0 {
		info.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			info.Extra[k] = append(authenticationv1.ExtraValue(nil), v...)
		}
	}
	return info
}
