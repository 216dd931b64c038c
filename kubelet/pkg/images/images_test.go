package images

import (
	"reflect"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "busybox", want: "docker.io/library/busybox:latest"},
		{in: "busybox:1.36", want: "docker.io/library/busybox:1.36"},
		{in: "library/busybox", want: "docker.io/library/busybox:latest"},
		{in: "user/app:v1", want: "docker.io/user/app:v1"},
		{in: "docker.io/busybox", want: "docker.io/library/busybox:latest"},
		{in: "127.0.0.1:5000/busybox", want: "127.0.0.1:5000/busybox:latest"},
		{in: "localhost/app:v2", want: "localhost/app:v2"},
		{in: "registry.k8s.io/pause:3.10", want: "registry.k8s.io/pause:3.10"},
		{
			in:   "busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			want: "docker.io/library/busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		},
		{in: "", wantErr: "empty image name"},
		{in: "Busybox", wantErr: "invalid image name"},
		{in: "busybox:bad tag", wantErr: "invalid image name"},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Normalize(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Normalize(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRegistries(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		host    string
		want    []Endpoint
		wantErr string
	}{
		{
			name: "docker.io mirror on loopback, then the registry",
			yaml: "mirrors:\n  docker.io:\n    endpoint:\n      - \"http://127.0.0.1:5000\"\n",
			host: "docker.io",
			want: []Endpoint{{"http", "127.0.0.1:5000", "/v2"}, {"https", "registry-1.docker.io", "/v2"}},
		},
		{
			name: "no mirror for the host: the registry itself",
			yaml: "mirrors:\n  docker.io:\n    endpoint: [\"http://127.0.0.1:5000\"]\n",
			host: "quay.io",
			want: []Endpoint{{"https", "quay.io", "/v2"}},
		},
		{
			name: "wildcard mirror, https by default, explicit path",
			yaml: "mirrors:\n  \"*\":\n    endpoint: [\"mirror.example:8443/custom/v2\"]\n",
			host: "quay.io",
			want: []Endpoint{{"https", "mirror.example:8443", "/custom/v2"}, {"https", "quay.io", "/v2"}},
		},
		{
			name: "a loopback registry speaks plain HTTP",
			yaml: "",
			host: "127.0.0.1:5000",
			want: []Endpoint{{"http", "127.0.0.1:5000", "/v2"}},
		},
		{
			name: "configs are read",
			yaml: "configs:\n  \"reg:5000\":\n    auth:\n      username: u\n      password: p\n    tls:\n      insecure_skip_verify: true\n",
			host: "reg:5000",
			want: []Endpoint{{"https", "reg:5000", "/v2"}},
		},
		{name: "bad scheme", yaml: "mirrors:\n  docker.io:\n    endpoint: [\"ftp://x\"]\n", wantErr: "scheme must be http or https"},
		{name: "unknown field", yaml: "mirror:\n  docker.io: {}\n", wantErr: "unknown field"},
		{name: "cert without key", yaml: "configs:\n  r:\n    tls:\n      cert_file: /c\n", wantErr: "cert_file and key_file go together"},
		{name: "not yaml", yaml: "mirrors: [", wantErr: "parsing registries config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRegistries([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Endpoints(tt.host); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Endpoints(%q) = %v, want %v", tt.host, got, tt.want)
			}
			hosts, err := r.Hosts()(tt.host)
			if err != nil || len(hosts) != len(tt.want) {
				t.Fatalf("Hosts = %v, %v", hosts, err)
			}
			for i, h := range hosts {
				if h.Host != tt.want[i].Host || h.Scheme != tt.want[i].Scheme || h.Path != tt.want[i].Path || h.Client == nil {
					t.Errorf("host %d = %+v, want %+v", i, h, tt.want[i])
				}
			}
		})
	}
}

func TestLoadRegistriesMissingFile(t *testing.T) {
	if _, err := LoadRegistries("/nonexistent/registries.yaml"); err == nil || !strings.Contains(err.Error(), "reading registries config") {
		t.Errorf("err = %v", err)
	}
	r, err := LoadRegistries("")
	if err != nil || len(r.Mirrors) != 0 {
		t.Errorf("empty path: %v, %v", r, err)
	}
}
