package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"skiff.dev/apiserver/pkg/testserver"
)

// kubectlDiscoveryAccept is what kubectl v1.32 and client-go send.
const kubectlDiscoveryAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

func getAccept(t *testing.T, ts *testserver.TestServer, path, accept string) (*http.Response, []byte) {
	t.Helper()
	c, err := ts.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestAggregatedDiscovery(t *testing.T) {
	ts := testserver.Start(t, nil)

	resp, body := getAccept(t, ts, "/api", kubectlDiscoveryAccept)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
		t.Fatalf("/api Content-Type = %q", ct)
	}
	var core apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &core); err != nil {
		t.Fatal(err)
	}
	if core.Kind != "APIGroupDiscoveryList" || core.APIVersion != "apidiscovery.k8s.io/v2" || len(core.Items) != 1 ||
		core.Items[0].Name != "" || len(core.Items[0].Versions) != 1 || core.Items[0].Versions[0].Version != "v1" {
		t.Fatalf("/api = %s", body)
	}
	var pods *apidiscoveryv2.APIResourceDiscovery
	for i, r := range core.Items[0].Versions[0].Resources {
		if r.Resource == "pods" {
			pods = &core.Items[0].Versions[0].Resources[i]
		}
	}
	if pods == nil {
		t.Fatalf("no pods in /api: %s", body)
	}
	if pods.Scope != apidiscoveryv2.ScopeNamespace || pods.SingularResource != "pod" || pods.ResponseKind == nil || pods.ResponseKind.Kind != "Pod" ||
		!reflect.DeepEqual(pods.ShortNames, []string{"po"}) || !reflect.DeepEqual(pods.Categories, []string{"all"}) {
		t.Errorf("pods = %+v", pods)
	}
	subs := map[string]apidiscoveryv2.APISubresourceDiscovery{}
	for _, s := range pods.Subresources {
		subs[s.Subresource] = s
	}
	for _, want := range []struct {
		name, kind string
		verbs      []string
	}{
		{"log", "Pod", []string{"get"}},
		{"exec", "PodExecOptions", []string{"create", "get"}},
		{"attach", "PodAttachOptions", []string{"create", "get"}},
		{"portforward", "PodPortForwardOptions", []string{"create", "get"}},
		{"eviction", "Eviction", []string{"create"}},
		{"binding", "Binding", []string{"create"}},
		{"status", "Pod", []string{"get", "patch", "update"}},
	} {
		got, ok := subs[want.name]
		if !ok || got.ResponseKind == nil || got.ResponseKind.Kind != want.kind || !reflect.DeepEqual(got.Verbs, want.verbs) {
			t.Errorf("pods/%s = %+v, want kind %s verbs %v", want.name, got, want.kind, want.verbs)
		}
	}

	resp, body = getAccept(t, ts, "/apis", kubectlDiscoveryAccept)
	var groups apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &groups); err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" || len(groups.Items) == 0 || groups.Items[0].Name != "apiregistration.k8s.io" {
		// As upstream: the aggregator's own group (priority 18000) first.
		t.Fatalf("/apis: %s %s", resp.Header.Get("Content-Type"), body)
	}

	// v2beta1 only.
	resp, body = getAccept(t, ts, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
	if resp.Header.Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList" || !strings.Contains(string(body), `"apiVersion":"apidiscovery.k8s.io/v2beta1"`) {
		t.Errorf("/apis v2beta1: %s", resp.Header.Get("Content-Type"))
	}

	// Clients that do not ask get the unaggregated documents.
	for _, p := range []string{"/api", "/apis"} {
		resp, body = getAccept(t, ts, p, "application/json")
		var tm metav1.TypeMeta
		_ = json.Unmarshal(body, &tm)
		if want := map[string]string{"/api": "APIVersions", "/apis": "APIGroupList"}[p]; tm.Kind != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s without aggregation: kind %q Content-Type %q", p, tm.Kind, resp.Header.Get("Content-Type"))
		}
	}
}

// resourceSet flattens discovery into comparable strings.
func resourceSet(t *testing.T, lists []*metav1.APIResourceList) []string {
	t.Helper()
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			verbs := append([]string(nil), r.Verbs...)
			sort.Strings(verbs)
			out = append(out, strings.Join([]string{l.GroupVersion, r.Name, r.Kind, r.SingularName,
				map[bool]string{true: "ns", false: "cluster"}[r.Namespaced], strings.Join(verbs, ","),
				strings.Join(r.ShortNames, ","), strings.Join(r.Categories, ",")}, " "))
		}
	}
	sort.Strings(out)
	return out
}

// TestAggregatedDiscoveryMatchesLegacy: client-go's discovery client, which
// uses aggregated discovery when the server offers it, sees what it sees
// through the per group-version documents.
func TestAggregatedDiscoveryMatchesLegacy(t *testing.T) {
	ts := testserver.Start(t, nil)
	aggregated, err := discovery.NewDiscoveryClientForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := discovery.NewDiscoveryClientForConfig(ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	legacy.UseLegacyDiscovery = true
	_, aggLists, err := aggregated.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	_, legacyLists, err := legacy.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	// Singular names of subresources: client-go fills them from the parent
	// in the aggregated form; the legacy documents leave them empty.
	a, l := resourceSet(t, aggLists), resourceSet(t, legacyLists)
	norm := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			f := strings.Split(s, " ")
			if strings.Contains(f[1], "/") {
				f[3] = ""
			}
			out[i] = strings.Join(f, " ")
		}
		return out
	}
	if !reflect.DeepEqual(norm(a), norm(l)) {
		t.Errorf("aggregated and legacy discovery differ:\naggregated %d: %v\nlegacy %d: %v", len(a), a, len(l), l)
	}
	found := false
	for _, s := range a {
		if strings.HasPrefix(s, "v1 pods/exec PodExecOptions") {
			found = true
		}
	}
	if !found || len(a) < 40 {
		t.Errorf("aggregated discovery lacks pods/exec or is short (%d entries)", len(a))
	}
}
