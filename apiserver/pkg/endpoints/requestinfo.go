package endpoints

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
)

// namespaceSubresources are the subresources of a namespace itself.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// ParseRequestInfo reads what a request is about from its method and path,
// as upstream's RequestInfoFactory does, before any route matches: the
// authorizer needs it first.
func ParseRequestInfo(r *http.Request) *RequestInfo {
	info := &RequestInfo{Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		info.Version, rest = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		info.Group, info.Version, rest = parts[1], parts[2], parts[3:]
	default:
		return nil
	}
	if len(rest) == 0 {
		return nil
	}
	if rest[0] == "namespaces" && len(rest) >= 2 {
		info.Namespace = rest[1]
		if len(rest) > 2 && !namespaceSubresources[rest[2]] {
			rest = rest[2:]
		} else {
			// The namespace object itself.
			info.Name = rest[1]
			info.Resource = "namespaces"
			if len(rest) > 2 {
				info.Subresource = rest[2]
			}
			info.Scope = "resource"
			info.Verb = verbFor(r, true)
			return info
		}
	}
	info.Resource = rest[0]
	if len(rest) >= 2 {
		info.Name = rest[1]
	}
	if len(rest) >= 3 {
		info.Subresource = rest[2]
	}
	info.Verb = verbFor(r, info.Name != "")
	switch {
	case info.Name != "":
		info.Scope = "resource"
	case info.Namespace != "":
		info.Scope = "namespace"
	default:
		info.Scope = "cluster"
	}
	if info.Name == "" && (info.Verb == "list" || info.Verb == "watch") {
		info.Name = selectedName(r)
	}
	return info
}

// selectedName is the name a list or watch selects with the field selector
// metadata.name=<name>, as upstream's RequestInfoFactory reads it: the
// authorizer then sees that name, so a role limited to resourceNames may
// list and watch the one object (as aggregated API servers read
// kube-system/extension-apiserver-authentication).
func selectedName(r *http.Request) string {
	sel, err := fields.ParseSelector(r.URL.Query().Get("fieldSelector"))
	if err != nil {
		return ""
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || name == "." || name == ".." || strings.ContainsAny(name, "/%") {
		return ""
	}
	return name
}

func verbFor(r *http.Request, named bool) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if isWatch(r) {
			return "watch"
		}
		if named {
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(r.Method)
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
