package endpoints

import (
	"fmt"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// connectOptions reads the options of a CONNECT request (pods/exec,
// attach, portforward and proxy, services/proxy, nodes/proxy) from its
// query, as upstream's ConnectResource decodes them into the subresource's
// options kind (v1 PodExecOptions, PodAttachOptions, ...), which the
// kind's row provides. For proxy, path is the part of the URL after proxy,
// and hasPath whether there was one ("" for .../proxy, "/" for
// .../proxy/). The options carry their kind, which is the kind admission
// sees.
func connectOptions(q url.Values, s *registry.Store, sub, path string, hasPath bool) (runtime.Object, error) {
	switch sub {
	case registry.SubExec, registry.SubAttach, registry.SubPortForward:
		if s.R.Kubelet != nil {
			return s.R.Kubelet.ConnectOptions(sub, q)
		}
	case registry.SubProxy:
		if s.R.Proxy != nil {
			p := ""
			if hasPath {
				p = "/" + path
			}
			return s.R.Proxy.NewOptions(p), nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: s.R.Group, Resource: s.R.Resource + "/" + sub}, "")
}

// admitConnect runs the admission chain on a CONNECT request before it is
// served, as upstream's ConnectResource: first the mutating plugins, then
// the validating ones, with operation CONNECT, the subresource and the
// options as the object (a mutating webhook may change them: the request
// is served with what it leaves). A dryRun request is upstream's 400.
func (h *Handler) admitConnect(r *http.Request, s *registry.Store, sub, ns, name string, opts runtime.Object) error {
	ctx := r.Context()
	if len(r.URL.Query()["dryRun"]) != 0 {
		return apierrors.NewBadRequest("dryRun is not supported")
	}
	if s.Admission == nil {
		return nil
	}
	u, _ := authn.UserFrom(ctx)
	a := &admission.Attributes{
		Operation: admission.Connect, Resource: s.R.GroupVersion().WithResource(s.R.Resource),
		Kind: opts.GetObjectKind().GroupVersionKind(), Subresource: sub, Namespace: ns, Name: name, Object: opts, User: u,
	}
	if err := s.Admission.Admit(ctx, a); err != nil {
		return err
	}
	return s.Admission.Validate(ctx, a)
}

// admittedConnectOptions reads a CONNECT request's options and admits
// them; the error is what the client is answered.
func (h *Handler) admittedConnectOptions(r *http.Request, s *registry.Store, sub, ns, name, path string, hasPath bool) (runtime.Object, error) {
	opts, err := connectOptions(r.URL.Query(), s, sub, path, hasPath)
	if err != nil {
		return nil, err
	}
	if err := h.admitConnect(r, s, sub, ns, name, opts); err != nil {
		return nil, err
	}
	return opts, nil
}

// proxyPath is the path a proxy request's options carry, after admission
// (a mutating webhook may have changed it), as the kind reads it.
func proxyPath(s *registry.Store, opts runtime.Object) (string, error) {
	if p, ok := s.R.Proxy.Path(opts); ok {
		return p, nil
	}
	return "", apierrors.NewInternalError(fmt.Errorf("invalid options object: %T", opts))
}

// locationDeps are what a kind's connect subresources may use to find
// where a request goes: the kind's storage, the core resources' storage,
// the proxy transport and the kubelet client.
func (h *Handler) locationDeps(s *registry.Store) rest.LocationDeps {
	return rest.LocationDeps{
		Store:     s,
		CoreStore: h.coreStore,
		Transport: h.proxyTransport(),
		Kubelet:   h.kubelet,
	}
}

// coreStore is the storage of a core/v1 resource, nil when it is not
// served.
func (h *Handler) coreStore(resource string) rest.Getter {
	if cs := h.stores[corev1.SchemeGroupVersion.WithResource(resource)]; cs != nil {
		return cs
	}
	return nil
}
