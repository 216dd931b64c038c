package endpoints

import (
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// tokenRequest serves serviceaccounts/token: the TokenRequest goes to the
// kind's (core/serviceaccount's TokenRequest: a signed token for the
// service account, optionally bound to a pod, as kubectl create token).
func (h *Handler) tokenRequest(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	gr := s.R.GroupResource()
	if h.Tokens == nil {
		h.writeError(w, r, apierrors.NewServiceUnavailable("this server has no --service-account-signing-key-file"), gr, name)
		return
	}
	data, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	gvk := authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")
	obj, err := h.decodeBody(w, r, data, gvk, &authenticationv1.TokenRequest{})
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	deps := rest.TokenDeps{ServiceAccounts: s, Pods: h.coreStore("pods"), Secrets: h.coreStore("secrets"), Nodes: h.coreStore("nodes"), Issuer: h.Tokens}
	out, err := s.R.TokenRequest(r.Context(), deps, ns, name, obj.(*authenticationv1.TokenRequest))
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	h.respond(w, r, http.StatusCreated, out, false)
}
