package endpoints

import (
	"fmt"
	"net/http"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// evict serves POST pods/{name}/eviction: the Eviction's delete options
// go to the kind's eviction (core/pod's Evict: the pod is deleted unless
// that would violate its PodDisruptionBudget), as upstream's EvictionREST.
func (h *Handler) evict(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	gr := s.R.GroupResource()
	dry, data, ok := h.writePreamble(w, r, gr, name, &metav1.CreateOptions{})
	if !ok {
		return
	}
	obj, err := h.decodeBody(w, r, data, policyv1.SchemeGroupVersion.WithKind("Eviction"), &policyv1.Eviction{})
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	ev := obj.(*policyv1.Eviction)
	if ev.Name != "" && ev.Name != name {
		h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("name in URL does not match name in Eviction object: %s != %s", name, ev.Name)), gr, name)
		return
	}
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	if len(opts.DryRun) > 0 {
		if dry, err = dryRun(opts.DryRun); err != nil {
			h.writeError(w, r, err, gr, name)
			return
		}
	}
	deps := rest.EvictionDeps{Pods: s}
	if pdbs := h.stores[policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")]; pdbs != nil {
		deps.Budgets = pdbs
	}
	if err := s.R.Eviction(r.Context(), deps, ns, name, opts, dry); err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	h.writeObject(w, r, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
}
