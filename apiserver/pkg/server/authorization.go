package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/endpoints"
)

// Authorization modes, as upstream's --authorization-mode values.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeRBAC        = "RBAC"
	ModeNode        = "Node"
)

// buildAuthorizer chains the modes in the order given, behind the
// system:masters short-cut upstream puts in front of every chain.
func (s *Server) buildAuthorizer(modes []string) (authz.Union, error) {
	chain := authz.Union{authz.Privileged{}}
	for _, m := range modes {
		switch m {
		case ModeAlwaysAllow:
			chain = append(chain, authz.AlwaysAllow{})
		case ModeRBAC:
			s.rbac = authz.NewRBAC()
			chain = append(chain, s.rbac)
		case ModeNode:
			s.nodeAuthz = authz.NewNode()
			chain = append(chain, s.nodeAuthz)
		default:
			return nil, fmt.Errorf("--authorization-mode: unknown mode %q (want AlwaysAllow, Node, RBAC)", m)
		}
	}
	return chain, nil
}

// attributesFor describes r for the authorizer.
func attributesFor(r *http.Request, u *authn.User) authz.Attributes {
	a := authz.Attributes{User: u, Path: r.URL.Path}
	if info := endpoints.ParseRequestInfo(r); info != nil {
		a.ResourceRequest = true
		a.Verb = info.Verb
		a.APIGroup, a.APIVersion = info.Group, info.Version
		a.Resource, a.Subresource = info.Resource, info.Subresource
		a.Namespace, a.Name = info.Namespace, info.Name
		if a.Verb == "get" && a.Resource == "pods" && isPodConnect(a.Subresource) {
			// Upstream (AuthorizePodWebsocketUpgradeCreatePermission): a
			// WebSocket GET that execs, attaches or forwards ports needs
			// create, as the POST does.
			a.Verb = "create"
		}
		return a
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		a.Verb = "get"
	case http.MethodPost:
		a.Verb = "post"
	case http.MethodPut:
		a.Verb = "put"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
	default:
		a.Verb = strings.ToLower(r.Method)
	}
	return a
}

func isPodConnect(sub string) bool {
	return sub == "exec" || sub == "attach" || sub == "portforward"
}

// forbidden is upstream's 403 Status for a.
func forbidden(a authz.Attributes, reason string) *apierrors.StatusError {
	name := ""
	if a.User != nil {
		name = a.User.Name
	}
	var msg string
	if !a.ResourceRequest {
		msg = fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	} else {
		res := a.Resource
		if a.Subresource != "" {
			res += "/" + a.Subresource
		}
		if a.Namespace != "" {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.Verb, res, a.APIGroup, a.Namespace)
		} else {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.Verb, res, a.APIGroup)
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, errors.New(msg))
}

// Authorize asks the chain about a; anything but Allow is forbidden.
func (s *Server) Authorize(ctx context.Context, a authz.Attributes) (bool, string, error) {
	d, reason, err := s.authorizer.Authorize(ctx, a)
	return d == authz.Allow, reason, err
}

// impersonate applies the Impersonate-* headers: the requester must be
// allowed to impersonate each user, group and uid it names.
func (s *Server) impersonate(r *http.Request, requester *authn.User) (*authn.User, error) {
	userName := r.Header.Get("Impersonate-User")
	groups := r.Header.Values("Impersonate-Group")
	uid := r.Header.Get("Impersonate-Uid")
	var extraKeys []string
	for k := range r.Header {
		if strings.HasPrefix(k, "Impersonate-Extra-") {
			extraKeys = append(extraKeys, k)
		}
	}
	if userName == "" {
		if len(groups) > 0 || uid != "" || len(extraKeys) > 0 {
			return nil, apierrors.NewBadRequest("requested impersonation of groups, uid or extra without a user (Impersonate-User)")
		}
		return requester, nil
	}
	check := func(a authz.Attributes) error {
		a.User, a.Verb, a.ResourceRequest = requester, "impersonate", true
		ok, reason, err := s.Authorize(r.Context(), a)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if !ok {
			return forbidden(a, reason)
		}
		return nil
	}
	out := &authn.User{Name: userName, UID: uid}
	if ns, sa, ok := serviceAccountUser(userName); ok {
		if err := check(authz.Attributes{Resource: "serviceaccounts", Namespace: ns, Name: sa}); err != nil {
			return nil, err
		}
		out.Groups = append(out.Groups, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	} else if err := check(authz.Attributes{Resource: "users", Name: userName}); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := check(authz.Attributes{Resource: "groups", Name: g}); err != nil {
			return nil, err
		}
		out.Groups = append(out.Groups, g)
	}
	if uid != "" {
		if err := check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "uids", Name: uid}); err != nil {
			return nil, err
		}
	}
	for _, k := range extraKeys {
		// Upstream's unescapeExtraKey: the key is percent-encoded in the
		// header name ("authentication.kubernetes.io%2fpod-name").
		key := strings.ToLower(strings.TrimPrefix(k, "Impersonate-Extra-"))
		if unescaped, err := url.PathUnescape(key); err == nil {
			key = unescaped
		}
		for _, v := range r.Header.Values(k) {
			if err := check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "userextras", Subresource: key, Name: v}); err != nil {
				return nil, err
			}
			if out.Extra == nil {
				out.Extra = map[string][]string{}
			}
			out.Extra[key] = append(out.Extra[key], v)
		}
	}
	hasAuth := false
	for _, g := range out.Groups {
		hasAuth = hasAuth || g == "system:authenticated"
	}
	if !hasAuth {
		out.Groups = append(out.Groups, "system:authenticated")
	}
	klog.FromContext(r.Context()).V(3).Info("impersonating", "requester", requester.Name, "user", out.Name, "groups", out.Groups)
	return out, nil
}

func serviceAccountUser(name string) (namespace, sa string, ok bool) {
	const prefix = "system:serviceaccount:"
	if !strings.HasPrefix(name, prefix) {
		return "", "", false
	}
	parts := strings.Split(strings.TrimPrefix(name, prefix), ":")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}
