package aggregator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"skiff.dev/apiserver/pkg/authn"
)

// The headers a front proxy names the user in, as upstream's
// --requestheader-username-headers, --requestheader-group-headers and
// --requestheader-extra-headers-prefix (kube-aggregator's defaults).
const (
	HeaderUser        = "X-Remote-User"
	HeaderUID         = "X-Remote-Uid"
	HeaderGroup       = "X-Remote-Group"
	HeaderExtraPrefix = "X-Remote-Extra-"
)

type proxyHandler struct {
	a    *Aggregator
	next http.Handler
}

// ServeHTTP answers /apis/<group> of an aggregated group from the
// APIServices, proxies /apis/<group>/<version>[/...] of a remote
// APIService, and passes the rest on.
func (h *proxyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/openapi/v3" {
		h.openAPIV3Discovery(w, r)
		return
	}
	// A remote group-version's OpenAPI v3 document is its backend's.
	rest, ok := strings.CutPrefix(r.URL.Path, "/openapi/v3/apis/")
	if ok {
		if parts := strings.SplitN(rest, "/", 3); len(parts) == 2 && parts[1] != "" {
			if api, remote := h.a.st.remote(schema.GroupVersion{Group: parts[0], Version: parts[1]}); remote {
				h.proxy(w, r, api.DeepCopy())
				return
			}
		}
		h.next.ServeHTTP(w, r)
		return
	}
	rest, ok = strings.CutPrefix(r.URL.Path, "/apis/")
	if !ok || rest == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) == 1 || (len(parts) == 2 && parts[1] == "") {
		apis := h.a.st.remoteGroup(parts[0])
		if len(apis) == 0 || r.Method != http.MethodGet {
			h.next.ServeHTTP(w, r)
			return
		}
		for _, g := range h.a.Groups() {
			if g.Name == parts[0] {
				g.APIGroup.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
				writeJSON(w, http.StatusOK, &g.APIGroup)
				return
			}
		}
		h.next.ServeHTTP(w, r)
		return
	}
	gv := schema.GroupVersion{Group: parts[0], Version: parts[1]}
	api, ok := h.a.st.remote(gv)
	if !ok {
		h.next.ServeHTTP(w, r)
		return
	}
	h.proxy(w, r, api.DeepCopy())
}

func (h *proxyHandler) proxy(w http.ResponseWriter, r *http.Request, api *apiregistrationv1.APIService) {
	logger := klog.FromContext(r.Context()).WithValues("apiservice", api.Name)
	user, ok := authn.UserFrom(r.Context())
	if !ok {
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("no user for the request to the APIService %s", api.Name)))
		return
	}
	if !available(api) {
		// As upstream: an APIService that is not available answers 503.
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the APIService %s is not available: %s", api.Name, conditionMessage(api))))
		return
	}
	target, err := h.a.resolve(api)
	if err != nil {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the APIService %s has no endpoint to reach: %v", api.Name, err)))
		return
	}
	tr, err := h.a.transports.For(api)
	if err != nil {
		writeStatus(w, apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.Host = target.Host
			pr.SetXForwarded()
			setUserHeaders(pr.Out.Header, user)
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			logger.V(2).Info("proxying to the APIService failed", "backend", target.Host, "err", err)
			writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
		},
	}
	rp.ServeHTTP(w, r)
}

// setUserHeaders replaces what the client sent in the identity headers by
// the authenticated user, and drops the client's own credentials and
// impersonation headers, which the API server has used (upstream's
// authentication and impersonation filters, then its auth proxy round
// tripper).
func setUserHeaders(h http.Header, u *authn.User) {
	h.Del("Authorization")
	for k := range h {
		if strings.HasPrefix(k, "Impersonate-") || strings.HasPrefix(k, HeaderExtraPrefix) {
			h.Del(k)
		}
	}
	h.Del(HeaderUser)
	h.Del(HeaderUID)
	h.Del(HeaderGroup)
	h.Set(HeaderUser, u.Name)
	if u.UID != "" {
		h.Set(HeaderUID, u.UID)
	}
	for _, g := range u.Groups {
		h.Add(HeaderGroup, g)
	}
	for k, vs := range u.Extra {
		for _, v := range vs {
			h.Add(HeaderExtraPrefix+headerKeyEscape(k), v)
		}
	}
}

// headerKeyEscape is upstream's: an extra's key percent-encoded where it
// holds a character a header name may not.
func headerKeyEscape(key string) string {
	const legal = "!#$&'*+-.^_`|~"
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte(legal, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func conditionMessage(api *apiregistrationv1.APIService) string {
	for _, c := range api.Status.Conditions {
		if c.Type == "Available" {
			return fmt.Sprintf("%s: %s", c.Reason, c.Message)
		}
	}
	return "not checked yet"
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	writeJSON(w, int(st.Code), &st)
}

func writeJSON(w http.ResponseWriter, code int, obj any) {
	data, err := json.Marshal(obj)
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}
