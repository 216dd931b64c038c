package integration

import (
	"io"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/testserver"
)

// discovered returns the entry discovery lists for resource in
// groupVersion, or fails the test.
func discovered(t *testing.T, ts *testserver.TestServer, groupVersion, resource string) metav1.APIResource {
	t.Helper()
	list, err := ts.Client.Discovery().ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return r
		}
	}
	t.Fatalf("discovery of %s does not list %s: %+v", groupVersion, resource, list.APIResources)
	return metav1.APIResource{}
}

// /api/, /apis/ and /apis/<group>/ answer as /api, /apis and
// /apis/<group>, as upstream's, for any authenticated user
// (system:discovery), in either discovery format.
func TestDiscoveryRootsWithTrailingSlash(t *testing.T) {
	ts := start(t, nil)
	cfg := rest.AnonymousClientConfig(ts.AdminConfig)
	cfg.BearerToken = "test-user-token"
	user, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, accept string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := user.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	aggregated := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	tests := []struct {
		name, path, want, accept string
	}{
		{name: "api", path: "/api/", want: "/api"},
		{name: "apis", path: "/apis/", want: "/apis"},
		{name: "aggregated api", path: "/api/", want: "/api", accept: aggregated},
		{name: "aggregated apis", path: "/apis/", want: "/apis", accept: aggregated},
		{name: "group", path: "/apis/apps/", want: "/apis/apps"},
		{name: "another group", path: "/apis/batch/", want: "/apis/batch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCode, wantBody := get(tc.want, tc.accept)
			code, body := get(tc.path, tc.accept)
			if wantCode != http.StatusOK || code != wantCode || body != wantBody {
				t.Errorf("GET %s: %d %.200s\nGET %s: %d %.200s", tc.path, code, body, tc.want, wantCode, wantBody)
			}
		})
	}
}
