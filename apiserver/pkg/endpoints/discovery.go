package endpoints

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/gorilla/mux"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"skiff.dev/apiserver/pkg/aggregator"
	"skiff.dev/apiserver/pkg/registry"
)

// Discovery serves /api, /apis, /apis/<group> and the per group-version
// resource lists, built from the resource table.
type Discovery struct {
	h         *Handler
	resources []*registry.Resource
	version   version.Info
	// ServerAddress is advertised in /api's serverAddressByClientCIDRs.
	ServerAddress string
	// Aggregated, when set, is the aggregation layer: the groups its
	// APIServices with a service serve, and the resource list of one such
	// group-version while it is available.
	Aggregated AggregatedGroups
}

// AggregatedGroups is what discovery needs of the aggregation layer.
type AggregatedGroups interface {
	Groups() []aggregator.Group
	ResourceList(group, version string) (*metav1.APIResourceList, bool)
}

// all is the resource table with the custom resources served now.
func (d *Discovery) all() []*registry.Resource {
	return append(slices.Clone(d.resources), d.h.CustomResources()...)
}

// ReviewGroupVersions are the groups served by create-only handlers rather
// than the resource table: access reviews (authorization.k8s.io) and token
// and self-subject reviews (authentication.k8s.io).
var ReviewGroupVersions = []schema.GroupVersion{{Group: "authorization.k8s.io", Version: "v1"}, {Group: "authentication.k8s.io", Version: "v1"}}

// NewDiscovery builds discovery for resources.
func NewDiscovery(h *Handler, resources []*registry.Resource, v version.Info, serverAddress string) *Discovery {
	return &Discovery{h: h, resources: resources, version: v, ServerAddress: serverAddress}
}

func (d *Discovery) groups() []metav1.APIGroup {
	seen := map[string]*metav1.APIGroup{}
	var names []string
	add := func(group, ver string) {
		g, ok := seen[group]
		if !ok {
			g = &metav1.APIGroup{Name: group}
			seen[group] = g
			names = append(names, group)
		}
		gv := metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + ver, Version: ver}
		for _, v := range g.Versions {
			if v == gv {
				return
			}
		}
		g.Versions = append(g.Versions, gv)
		g.PreferredVersion = g.Versions[0]
	}
	for _, r := range d.all() {
		if r.Group != "" {
			add(r.Group, r.Version)
		}
	}
	for _, gv := range ReviewGroupVersions {
		add(gv.Group, gv.Version)
	}
	// As upstream's aggregator orders /apis: by the highest
	// groupPriorityMinimum of a group's APIServices, then by name.
	priority := map[string]int32{}
	for _, n := range names {
		for _, v := range seen[n].Versions {
			if p, _ := registry.APIServicePriority(schema.GroupVersion{Group: n, Version: v.Version}); p > priority[n] {
				priority[n] = p
			}
		}
	}
	if d.Aggregated != nil {
		for _, g := range d.Aggregated.Groups() {
			if g.Priority > priority[g.Name] {
				priority[g.Name] = g.Priority
			}
			if _, local := seen[g.Name]; local {
				continue
			}
			group := g.APIGroup
			seen[g.Name] = &group
			names = append(names, g.Name)
		}
	}
	sort.SliceStable(names, func(i, j int) bool {
		if pi, pj := priority[names[i]], priority[names[j]]; pi != pj {
			return pi > pj
		}
		return names[i] < names[j]
	})
	out := make([]metav1.APIGroup, 0, len(names))
	for _, n := range names {
		out = append(out, *seen[n])
	}
	return out
}

func storageVersionHash(group, ver, kind string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%s", group, ver, kind)))
	return encodeHash(sum[:8])
}

func encodeHash(b []byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	// base64 without padding, as upstream's storageVersionHash.
	out := make([]byte, 0, 12)
	for i := 0; i < len(b); i += 3 {
		var n uint32
		k := 0
		for j := 0; j < 3; j++ {
			n <<= 8
			if i+j < len(b) {
				n |= uint32(b[i+j])
				k++
			}
		}
		for j := 0; j <= k; j++ {
			out = append(out, alphabet[(n>>(18-6*uint(j)))&0x3f])
		}
	}
	return string(out)
}

// createOnlyResources are a group-version's resources that are answered,
// not stored.
func createOnlyResources(group, ver string) []CreateOnlyResource {
	switch {
	case group == "" && ver == "v1":
		return []CreateOnlyResource{LegacyBindingsResource}
	case group == "authorization.k8s.io" && ver == "v1":
		return ReviewResources
	case group == "authentication.k8s.io" && ver == "v1":
		return []CreateOnlyResource{SelfSubjectReviewResource, TokenReviewResource}
	}
	return nil
}

// resourceList is the APIResourceList of one group-version.
func (d *Discovery) resourceList(group, ver string) (*metav1.APIResourceList, bool) {
	gv := ver
	if group != "" {
		gv = group + "/" + ver
	}
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	found := false
	for _, r := range d.all() {
		if r.Group != group || r.Version != ver {
			continue
		}
		found = true
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: r.Resource, SingularName: r.SingularName, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: r.Verbs(), ShortNames: r.ShortNames, Categories: r.Categories,
			StorageVersionHash: storageVersionHash(r.Group, r.Version, r.Kind),
		})
		for _, sub := range r.SubresourceInfos() {
			res := metav1.APIResource{Name: r.Resource + "/" + sub.Name, Namespaced: r.Namespaced, Kind: sub.Kind, Verbs: sub.Verbs}
			// Group and version are named only where they differ from the parent's.
			if sub.Group != r.Group || sub.Version != r.Version {
				res.Group, res.Version = sub.Group, sub.Version
			}
			list.APIResources = append(list.APIResources, res)
		}
	}
	if group == "" && ver == "v1" {
		list.APIResources = append(list.APIResources, componentStatusesDiscovery)
	}
	for _, rr := range createOnlyResources(group, ver) {
		found = true
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: rr.Resource, SingularName: strings.ToLower(rr.Kind), Namespaced: rr.Namespaced, Kind: rr.Kind, Verbs: []string{"create"},
		})
	}
	if !found && d.Aggregated != nil {
		if agg, ok := d.Aggregated.ResourceList(group, ver); ok {
			out := agg.DeepCopy()
			out.TypeMeta, out.GroupVersion = list.TypeMeta, gv
			return out, true
		}
	}
	if found {
		sort.SliceStable(list.APIResources, func(i, j int) bool { return list.APIResources[i].Name < list.APIResources[j].Name })
	}
	return list, found
}

// Install adds the discovery routes and /version.
func (d *Discovery) Install(r *mux.Router) {
	// /api/ and /apis/ answer as /api and /apis, as upstream's.
	r.HandleFunc("/api{slash:/?}", func(w http.ResponseWriter, req *http.Request) {
		if v := aggregatedVersion(req.Header.Get("Accept")); v != "" {
			d.serveAggregated(w, req, true, v)
			return
		}
		w.Header().Set("Vary", "Accept")
		d.h.writeObject(w, req, http.StatusOK, &metav1.APIVersions{
			TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
			Versions:                   []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: d.ServerAddress}},
		})
	}).Methods(http.MethodGet)
	r.HandleFunc("/api/v1", func(w http.ResponseWriter, req *http.Request) {
		list, _ := d.resourceList("", "v1")
		d.h.writeObject(w, req, http.StatusOK, list)
	}).Methods(http.MethodGet)
	r.HandleFunc("/apis{slash:/?}", func(w http.ResponseWriter, req *http.Request) {
		if v := aggregatedVersion(req.Header.Get("Accept")); v != "" {
			d.serveAggregated(w, req, false, v)
			return
		}
		w.Header().Set("Vary", "Accept")
		d.h.writeObject(w, req, http.StatusOK, &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: d.groups()})
	}).Methods(http.MethodGet)
	// /apis/<group>/ answers as /apis/<group>, as upstream's (the
	// conformance test of preferred versions asks with the slash).
	r.HandleFunc("/apis/{group}{slash:/?}", func(w http.ResponseWriter, req *http.Request) {
		group := mux.Vars(req)["group"]
		for _, g := range d.groups() {
			if g.Name == group {
				g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
				d.h.writeObject(w, req, http.StatusOK, &g)
				return
			}
		}
		d.h.writeError(w, req, notFoundPath(req.URL.Path), schemaGR, "")
	}).Methods(http.MethodGet)
	r.HandleFunc("/apis/{group}/{version}", func(w http.ResponseWriter, req *http.Request) {
		v := mux.Vars(req)
		list, ok := d.resourceList(v["group"], v["version"])
		if !ok {
			d.h.writeError(w, req, notFoundPath(req.URL.Path), schemaGR, "")
			return
		}
		d.h.writeObject(w, req, http.StatusOK, list)
	}).Methods(http.MethodGet)
	r.HandleFunc("/version", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(d.version)
	}).Methods(http.MethodGet)
}
