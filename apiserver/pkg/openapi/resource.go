package openapi

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The verbs a Resource or Subresource may list, as discovery spells them.
const (
	VerbCreate           = "create"
	VerbDelete           = "delete"
	VerbDeleteCollection = "deletecollection"
	VerbGet              = "get"
	VerbList             = "list"
	VerbPatch            = "patch"
	VerbUpdate           = "update"
	VerbWatch            = "watch"
)

var knownVerbs = []string{VerbCreate, VerbDelete, VerbDeleteCollection, VerbGet, VerbList, VerbPatch, VerbUpdate, VerbWatch}

// Resource is one REST resource the API server serves, as its discovery
// document describes it.
type Resource struct {
	// Group, Version and Kind of the objects stored under the resource. The
	// core group is "".
	Group, Version, Kind string
	// Resource is the lower-case plural used in paths, e.g. "replicasets".
	Resource string
	// Namespaced resources live under /namespaces/{namespace}/ and are also
	// listed across namespaces.
	Namespaced bool
	// Verbs the resource supports: create delete deletecollection get list
	// patch update watch.
	Verbs []string
	// Subresources of the resource, such as status, scale or binding.
	Subresources []Subresource
	// ListKind is the kind of the list type; Kind+"List" when empty.
	ListKind string
	// DeleteReturnsObject is true when DELETE answers with the deleted object
	// rather than a Status (upstream: pods, services, namespaces and a few
	// more whose store sets ReturnDeletedObject).
	DeleteReturnsObject bool
	// Schema, when set, describes a custom resource: its kind has no Go
	// type, and its definition is this schema (from the
	// CustomResourceDefinition's version).
	Schema *spec.Schema
}

// Subresource is a subresource of a Resource, e.g. replicasets/scale.
type Subresource struct {
	// Name is the path segment after {name}, e.g. "status".
	Name string
	// Group, Version and Kind of the subresource's objects: the parent's kind
	// for status, autoscaling/v1 Scale for scale, core/v1 Binding for binding,
	// core/v1 PodExecOptions and the like for connect subresources (exec,
	// attach, portforward, proxy), core/v1 Pod for pods/log. An empty Version
	// means the parent's group and version.
	Group, Version, Kind string
	// Verbs the subresource supports (get update patch create ...).
	Verbs []string
}

func (r Resource) groupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

func (r Resource) gvk() schema.GroupVersionKind {
	return r.groupVersion().WithKind(r.Kind)
}

func (r Resource) listGVK() schema.GroupVersionKind {
	if r.ListKind != "" {
		return r.groupVersion().WithKind(r.ListKind)
	}
	return r.groupVersion().WithKind(r.Kind + "List")
}

func (r Resource) has(verb string) bool {
	return slices.Contains(r.Verbs, verb)
}

func (s Subresource) gvk(parent Resource) schema.GroupVersionKind {
	if s.Version == "" {
		return parent.groupVersion().WithKind(s.Kind)
	}
	return schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}
}

func (s Subresource) has(verb string) bool {
	return slices.Contains(s.Verbs, verb)
}

// gvPath is the path segment of a group-version under /openapi/v3/: "api/v1"
// for the core group, "apis/<group>/<version>" otherwise.
func gvPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

func validateResources(resources []Resource) error {
	seen := map[string]bool{}
	for _, r := range resources {
		if r.Version == "" || r.Kind == "" || r.Resource == "" {
			return fmt.Errorf("resource %q in %q: version, kind and resource must be set", r.Resource, r.groupVersion())
		}
		if strings.Contains(r.Resource, "/") {
			return fmt.Errorf("resource %q in %q: subresources go in Subresources", r.Resource, r.groupVersion())
		}
		key := r.groupVersion().String() + "/" + r.Resource
		if seen[key] {
			return fmt.Errorf("resource %q listed twice in %q", r.Resource, r.groupVersion())
		}
		seen[key] = true
		for _, v := range r.Verbs {
			if !slices.Contains(knownVerbs, v) {
				return fmt.Errorf("resource %q in %q: unknown verb %q", r.Resource, r.groupVersion(), v)
			}
		}
		subs := map[string]bool{}
		for _, s := range r.Subresources {
			if s.Name == "" || s.Kind == "" || strings.Contains(s.Name, "/") {
				return fmt.Errorf("resource %q in %q: subresource %q needs a name without '/' and a kind", r.Resource, r.groupVersion(), s.Name)
			}
			if subs[s.Name] {
				return fmt.Errorf("resource %q in %q: subresource %q listed twice", r.Resource, r.groupVersion(), s.Name)
			}
			subs[s.Name] = true
			for _, v := range s.Verbs {
				if !slices.Contains(knownVerbs, v) {
					return fmt.Errorf("subresource %s/%s in %q: unknown verb %q", r.Resource, s.Name, r.groupVersion(), v)
				}
			}
		}
	}
	return nil
}
