package images

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/remotes/docker"
)

func TestDisableDefaultEndpoint(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		disable bool // the kubelet flag
		host    string
		want    []Endpoint
	}{
		{
			name:    "flag: a mirrored registry is pulled from its mirror only",
			yaml:    "mirrors:\n  docker.io:\n    endpoint: [\"http://127.0.0.1:5000\"]\n",
			disable: true,
			host:    "docker.io",
			want:    []Endpoint{{"http", "127.0.0.1:5000", "/v2"}},
		},
		{
			name: "file: disable_default_endpoint does the same",
			yaml: "disable_default_endpoint: true\nmirrors:\n  registry.k8s.io:\n    endpoint: [\"http://127.0.0.1:5000\", \"http://127.0.0.1:5001\"]\n",
			host: "registry.k8s.io",
			want: []Endpoint{{"http", "127.0.0.1:5000", "/v2"}, {"http", "127.0.0.1:5001", "/v2"}},
		},
		{
			name:    "a registry without a mirror entry is still pulled from directly, as in k3s",
			yaml:    "mirrors:\n  docker.io:\n    endpoint: [\"http://127.0.0.1:5000\"]\n",
			disable: true,
			host:    "127.0.0.1:5055",
			want:    []Endpoint{{"http", "127.0.0.1:5055", "/v2"}},
		},
		{
			name:    "the wildcard entry mirrors every registry",
			yaml:    "mirrors:\n  \"*\":\n    endpoint: [\"http://127.0.0.1:5000\"]\n",
			disable: true,
			host:    "quay.io",
			want:    []Endpoint{{"http", "127.0.0.1:5000", "/v2"}},
		},
		{
			name: "off: the registry itself comes last",
			yaml: "mirrors:\n  docker.io:\n    endpoint: [\"http://127.0.0.1:5000\"]\n",
			host: "docker.io",
			want: []Endpoint{{"http", "127.0.0.1:5000", "/v2"}, {"https", "registry-1.docker.io", "/v2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRegistries([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			r.DisableDefaultEndpoint = r.DisableDefaultEndpoint || tt.disable
			if got := r.Endpoints(tt.host); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Endpoints(%q) = %v, want %v", tt.host, got, tt.want)
			}
			hosts, err := r.Hosts()(tt.host)
			if err != nil || len(hosts) != len(tt.want) {
				t.Fatalf("Hosts = %v, %v", hosts, err)
			}
		})
	}
}

func TestDisableDefaultEndpointEmptyMirror(t *testing.T) {
	r, err := ParseRegistries([]byte("disable_default_endpoint: true\nmirrors:\n  docker.io: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Hosts()("docker.io"); err == nil || !strings.Contains(err.Error(), "lists no endpoint and the default endpoint https://registry-1.docker.io/v2 is disabled") {
		t.Errorf("err = %v", err)
	}
	if _, err := ParseRegistries([]byte("disable_default_endpoint: yes please\n")); err == nil {
		t.Error("a non-boolean disable_default_endpoint was accepted")
	}
}

func TestPullError(t *testing.T) {
	base := errors.New("docker.io/library/nginx:latest: not found")
	r, err := ParseRegistries([]byte("mirrors:\n  docker.io:\n    endpoint: [\"http://127.0.0.1:5000\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := r.PullError("docker.io/library/nginx:latest", base)
	if want := "pulling docker.io/library/nginx:latest from mirror http://127.0.0.1:5000/v2, then https://registry-1.docker.io/v2: docker.io/library/nginx:latest: not found"; got.Error() != want {
		t.Errorf("default on:\n got %s\nwant %s", got, want)
	}
	r.DisableDefaultEndpoint = true
	got = r.PullError("docker.io/library/nginx:latest", base)
	if want := "pulling docker.io/library/nginx:latest from mirror http://127.0.0.1:5000/v2; the default endpoint https://registry-1.docker.io/v2 is disabled: docker.io/library/nginx:latest: not found"; got.Error() != want {
		t.Errorf("default off:\n got %s\nwant %s", got, want)
	}
	if !errors.Is(got, base) {
		t.Error("the cause is not wrapped")
	}
	if got := r.PullError("quay.io/app:v1", base); got != base {
		t.Errorf("an unmirrored registry's error changed: %v", got)
	}
	if r.PullError("docker.io/library/nginx:latest", nil) != nil {
		t.Error("no error became one")
	}
}

// registry is a loopback registry that answers 404 to everything and
// counts the requests it got.
func registry(t *testing.T) (host string, hits *atomic.Int32) {
	hits = new(atomic.Int32)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/v2/" {
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN"}]}`, http.StatusNotFound)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://"), hits
}

// TestDisableDefaultEndpointResolve resolves an image that its mirror
// lacks with containerd's resolver: with the switch, the registry itself
// (another loopback server standing for the public one) is never asked.
func TestDisableDefaultEndpointResolve(t *testing.T) {
	mirror, mirrorHits := registry(t)
	public, publicHits := registry(t)
	ref := public + "/library/nginx:latest"
	for _, disable := range []bool{true, false} {
		mirrorHits.Store(0)
		publicHits.Store(0)
		r := &Registries{Mirrors: map[string]Mirror{public: {Endpoints: []string{"http://" + mirror}}}, DisableDefaultEndpoint: disable}
		resolver := docker.NewResolver(docker.ResolverOptions{Hosts: r.Hosts()})
		_, _, err := resolver.Resolve(context.Background(), ref)
		err = r.PullError(ref, err)
		if !errdefs.IsNotFound(err) {
			t.Fatalf("disable=%v: err = %v, want not found", disable, err)
		}
		if !strings.Contains(err.Error(), "mirror http://"+mirror+"/v2") {
			t.Errorf("disable=%v: the error does not name the mirror: %v", disable, err)
		}
		if mirrorHits.Load() == 0 {
			t.Errorf("disable=%v: the mirror was not asked", disable)
		}
		if n := publicHits.Load(); disable && n != 0 {
			t.Errorf("disable=true: the registry itself got %d requests", n)
		} else if !disable && n == 0 {
			t.Errorf("disable=false: the registry itself was not tried after the mirror")
		}
	}
}
