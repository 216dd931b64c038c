package endpoints

import (
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/serviceaccount"
)

// tokenRequest serves serviceaccounts/token: a signed token for the
// service account, optionally bound to a pod (kubectl create token).
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
	tr := obj.(*authenticationv1.TokenRequest)
	ttl := int64(3600)
	if tr.Spec.ExpirationSeconds != nil {
		ttl = *tr.Spec.ExpirationSeconds
	}
	if ttl < 600 || ttl > 1<<32 {
		h.writeError(w, r, apierrors.NewInvalid(gvk.GroupKind(), name, field.ErrorList{field.Invalid(field.NewPath("spec", "expirationSeconds"), ttl, "may not specify a duration less than 10 minutes or greater than 2^32 seconds")}), gr, name)
		return
	}
	saObj, err := s.Get(r.Context(), ns, name)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	sa := saObj.(*corev1.ServiceAccount)
	var pod, node *serviceaccount.Ref
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		if ref.Kind != "Pod" || (ref.APIVersion != "" && ref.APIVersion != "v1") {
			h.writeError(w, r, apierrors.NewInvalid(gvk.GroupKind(), name, field.ErrorList{field.NotSupported(field.NewPath("spec", "boundObjectRef", "kind"), ref.Kind, []string{"Pod"})}), gr, name)
			return
		}
		podStore := h.stores[schema.GroupVersionResource{Version: "v1", Resource: "pods"}]
		p, err := podStore.Get(r.Context(), ns, ref.Name)
		if err != nil {
			h.writeError(w, r, err, schema.GroupResource{Resource: "pods"}, ref.Name)
			return
		}
		po := p.(*corev1.Pod)
		if ref.UID != "" && ref.UID != po.UID {
			h.writeError(w, r, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, ref.Name, errUIDMismatch), gr, name)
			return
		}
		pod = &serviceaccount.Ref{Name: po.Name, UID: string(po.UID)}
		// The pod's node goes into the token too (its UID when the
		// Node object is there), as upstream's.
		if po.Spec.NodeName != "" {
			node = &serviceaccount.Ref{Name: po.Spec.NodeName}
			if nodes := h.stores[schema.GroupVersionResource{Version: "v1", Resource: "nodes"}]; nodes != nil {
				if n, err := nodes.Get(r.Context(), "", po.Spec.NodeName); err == nil {
					node.UID = string(n.(*corev1.Node).UID)
				}
			}
		}
	}
	now := time.Now()
	token, exp, err := h.Tokens.Issue(ns, serviceaccount.Ref{Name: sa.Name, UID: string(sa.UID)}, pod, node, tr.Spec.Audiences, time.Duration(ttl)*time.Second, now)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	tr.Name, tr.Namespace = name, ns
	tr.CreationTimestamp = metav1.NewTime(now.Truncate(time.Second))
	tr.Spec.ExpirationSeconds = &ttl
	if len(tr.Spec.Audiences) == 0 {
		tr.Spec.Audiences = []string{h.Tokens.Issuer}
	}
	tr.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp.Truncate(time.Second))}
	h.respond(w, r, http.StatusCreated, tr, false)
}

type uidMismatch struct{}

func (uidMismatch) Error() string {
	return "the UID in the bound object reference does not match the pod"
}

var errUIDMismatch = uidMismatch{}
