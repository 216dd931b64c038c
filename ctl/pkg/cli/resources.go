package cli

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// Target is one resource type of a command line with the names given for
// it; no names means every object of the type.
type Target struct {
	Mapping *meta.RESTMapping
	Names   []string
	// Namespace, when set, overrides the request's namespace (objects
	// named by a manifest).
	Namespace string
}

// In returns the namespace of the target: its own, else ns.
func (t Target) In(ns string) string {
	if t.Namespace != "" {
		return t.Namespace
	}
	return ns
}

// Resolver maps what users type to REST mappings.
type Resolver struct {
	Mapper    meta.RESTMapper
	Discovery discovery.DiscoveryInterface
}

// NewResolver returns the Resolver of f.
func (f *Factory) NewResolver() (*Resolver, error) {
	m, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	d, err := f.Discovery()
	if err != nil {
		return nil, err
	}
	return &Resolver{Mapper: m, Discovery: d}, nil
}

// Mapping resolves a resource name as kubectl accepts it: plural, singular,
// short name or kind, optionally qualified as resource.version.group or
// resource.group.
func (r *Resolver) Mapping(arg string) (*meta.RESTMapping, error) {
	arg = strings.ToLower(strings.TrimSpace(arg))
	if arg == "" {
		return nil, fmt.Errorf("empty resource type")
	}
	full, gr := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	var err error
	if full != nil {
		gvk, err = r.Mapper.KindFor(*full)
	}
	if gvk.Empty() {
		gvk, err = r.Mapper.KindFor(gr.WithVersion(""))
	}
	if err != nil && !meta.IsNoMatchError(err) {
		// Discovery failed: the server is unreachable or refused us.
		return nil, err
	}
	if err != nil || gvk.Empty() {
		return nil, r.unknownResource(arg)
	}
	m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, r.unknownResource(arg)
	}
	return m, nil
}

// MappingForKind resolves the apiVersion and kind of a manifest.
func (r *Resolver) MappingForKind(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, &UnknownKindError{GVK: gvk, Suggestions: r.suggest(strings.ToLower(gvk.Kind))}
		}
		return nil, err
	}
	return m, nil
}

// UnknownKindError reports a kind or resource type the server does not serve.
type UnknownKindError struct {
	Arg         string
	GVK         schema.GroupVersionKind
	Suggestions []string
}

func (e *UnknownKindError) Error() string {
	var msg string
	if e.Arg != "" {
		msg = fmt.Sprintf("the server doesn't have a resource type %q", e.Arg)
	} else {
		msg = fmt.Sprintf("the server doesn't serve kind %q in apiVersion %q", e.GVK.Kind, e.GVK.GroupVersion().String())
	}
	if len(e.Suggestions) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", strings.Join(e.Suggestions, " or "))
	}
	return msg + " (skiffctl api-resources lists what it serves)"
}

func (r *Resolver) unknownResource(arg string) error {
	return &UnknownKindError{Arg: arg, Suggestions: r.suggest(arg)}
}

// suggest returns the known resource names closest to arg (edit
// distance 2 at most).
func (r *Resolver) suggest(arg string) []string {
	if r.Discovery == nil {
		return nil
	}
	_, lists, err := r.Discovery.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil
	}
	base, _, _ := strings.Cut(arg, ".")
	best := 3
	found := map[string]bool{}
	for _, l := range lists {
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") {
				continue
			}
			d := best + 1
			for _, c := range append([]string{res.Name, res.SingularName, strings.ToLower(res.Kind)}, res.ShortNames...) {
				if c != "" {
					d = min(d, editDistance(base, c))
				}
			}
			if d > 2 {
				continue
			}
			switch {
			case d < best:
				best = d
				found = map[string]bool{res.Name: true}
			case d == best:
				found[res.Name] = true
			}
		}
	}
	out := make([]string, 0, len(found))
	for n := range found {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Targets parses the arguments of get, describe, delete, label ...:
// "TYPE [NAME...]", "TYPE1,TYPE2 [NAME...]", "TYPE/NAME ...", or "all".
func (r *Resolver) Targets(args []string) ([]Target, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("you must specify the type of resource, e.g. pods (skiffctl api-resources lists them)")
	}
	if strings.Contains(args[0], "/") {
		return r.slashTargets(args)
	}
	var targets []Target
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			continue
		}
		ms, err := r.expand(typ)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			targets = append(targets, Target{Mapping: m, Names: args[1:]})
		}
	}
	return targets, nil
}

// expand resolves one type, or a category such as "all" into its types.
func (r *Resolver) expand(typ string) ([]*meta.RESTMapping, error) {
	m, err := r.Mapping(typ)
	if err == nil {
		return []*meta.RESTMapping{m}, nil
	}
	if r.Discovery != nil {
		grs, ok := restmapper.NewDiscoveryCategoryExpander(r.Discovery).Expand(strings.ToLower(typ))
		if ok && len(grs) > 0 {
			r.sortAsServed(grs)
			var out []*meta.RESTMapping
			for _, gr := range grs {
				gvk, err := r.Mapper.KindFor(gr.WithVersion(""))
				if err != nil {
					continue
				}
				m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					continue
				}
				out = append(out, m)
			}
			return out, nil
		}
	}
	return nil, err
}

// sortAsServed orders a category's resources as kubectl prints them: by
// the server's order of API groups (core first), then by resource name.
// The expansion's own order follows the discovery cache's and is not
// stable from one run to the next.
func (r *Resolver) sortAsServed(grs []schema.GroupResource) {
	rank := map[string]int{}
	if groups, err := r.Discovery.ServerGroups(); err == nil {
		for i, g := range groups.Groups {
			if _, seen := rank[g.Name]; !seen {
				rank[g.Name] = i
			}
		}
	}
	sort.SliceStable(grs, func(i, j int) bool {
		ri, iok := rank[grs[i].Group]
		rj, jok := rank[grs[j].Group]
		if iok != jok {
			return iok
		}
		if ri != rj {
			return ri < rj
		}
		return grs[i].Resource < grs[j].Resource
	})
}

func (r *Resolver) slashTargets(args []string) ([]Target, error) {
	var targets []Target
	index := map[string]int{}
	for _, a := range args {
		typ, name, ok := strings.Cut(a, "/")
		if !ok || typ == "" || name == "" {
			return nil, fmt.Errorf("%q: when one argument is TYPE/NAME, all must be (e.g. pod/nginx deploy/web)", a)
		}
		m, err := r.Mapping(typ)
		if err != nil {
			return nil, err
		}
		key := m.Resource.String()
		if i, ok := index[key]; ok {
			targets[i].Names = append(targets[i].Names, name)
			continue
		}
		index[key] = len(targets)
		targets = append(targets, Target{Mapping: m, Names: []string{name}})
	}
	return targets, nil
}

// KindName returns "kind.group" as kubectl prints it before "/name",
// e.g. "pod" or "deployment.apps".
func KindName(m *meta.RESTMapping) string {
	k := strings.ToLower(m.GroupVersionKind.Kind)
	if g := m.GroupVersionKind.Group; g != "" {
		return k + "." + g
	}
	return k
}
