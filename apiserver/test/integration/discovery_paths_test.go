package integration

import (
	"io"
	"net/http"
	"testing"

	"k8s.io/client-go/rest"
)

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
