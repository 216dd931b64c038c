package endpoints

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Aggregated discovery (apidiscovery.k8s.io): one answer on /api or /apis
// holds every group, version and resource, so that a client such as
// kubectl needs two requests instead of one per group-version.
const (
	discoveryGroup       = "apidiscovery.k8s.io"
	discoveryListKind    = "APIGroupDiscoveryList"
	aggregatedV2         = "v2"
	aggregatedV2beta1    = "v2beta1"
	aggregatedMediaTypeF = "application/json;g=" + discoveryGroup + ";v=%s;as=" + discoveryListKind
)

// aggregatedVersion reads the Accept header as upstream does: the first
// clause the server can serve wins. It returns the apidiscovery version
// asked for, or "" when the client wants the unaggregated documents.
func aggregatedVersion(accept string) string {
	if strings.TrimSpace(accept) == "" {
		return ""
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		if params["g"] == "" && params["as"] == "" {
			// A plain media type: the unaggregated documents.
			return ""
		}
		if mt != "application/json" || params["g"] != discoveryGroup || params["as"] != discoveryListKind {
			continue
		}
		if v := params["v"]; v == aggregatedV2 || v == aggregatedV2beta1 {
			return v
		}
	}
	return ""
}

// aggregatedList is the APIGroupDiscoveryList of the core group (core) or
// of every named group, built from the same resource lists the
// unaggregated documents serve.
func (d *Discovery) aggregatedList(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: discoveryListKind, APIVersion: discoveryGroup + "/" + aggregatedV2},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	type groupVersions struct {
		name     string
		versions []string
	}
	var groups []groupVersions
	if core {
		groups = []groupVersions{{name: "", versions: []string{"v1"}}}
	} else {
		for _, g := range d.groups() {
			gv := groupVersions{name: g.Name}
			for _, v := range g.Versions {
				gv.versions = append(gv.versions, v.Version)
			}
			groups = append(groups, gv)
		}
	}
	for _, g := range groups {
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			rl, ok := d.resourceList(g.name, v)
			if !ok {
				continue
			}
			item.Versions = append(item.Versions, apidiscoveryv2.APIVersionDiscovery{
				Version: v, Resources: toResourceDiscovery(rl.APIResources), Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			})
		}
		if len(item.Versions) == 0 {
			// An aggregated group none of whose APIServices is available.
			continue
		}
		list.Items = append(list.Items, item)
	}
	return list
}

// toResourceDiscovery folds an APIResourceList's entries into resources
// with their subresources, as upstream's ConvertGroupVersionIntoToDiscovery.
func toResourceDiscovery(in []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	out := []apidiscoveryv2.APIResourceDiscovery{}
	index := map[string]int{}
	for _, r := range in {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, Scope: scope, SingularResource: r.SingularName,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Verbs:        r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
	}
	for _, r := range in {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, found := index[parent]
		if !found {
			continue
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, Verbs: r.Verbs,
		})
	}
	return out
}

// serveAggregated answers with the aggregated document in version v
// (v2 or v2beta1, which share their shape).
func (d *Discovery) serveAggregated(w http.ResponseWriter, r *http.Request, core bool, v string) {
	list := d.aggregatedList(core)
	list.APIVersion = discoveryGroup + "/" + v
	data, err := json.Marshal(list)
	if err != nil {
		d.h.writeError(w, r, err, schemaGR, "")
		return
	}
	sum := sha256.Sum256(data)
	etag := fmt.Sprintf("%q", fmt.Sprintf("%X", sum[:16]))
	w.Header().Set("Vary", "Accept")
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", fmt.Sprintf(aggregatedMediaTypeF, v))
	if match := r.Header.Get("If-None-Match"); match != "" && match == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}
