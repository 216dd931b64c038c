package images

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/containerd/containerd/remotes/docker"
	"sigs.k8s.io/yaml"
)

// Registries is k3s's registries.yaml: mirrors per registry host and
// per-host connection settings.
type Registries struct {
	Mirrors map[string]Mirror         `json:"mirrors,omitempty"`
	Configs map[string]RegistryConfig `json:"configs,omitempty"`
	// DisableDefaultEndpoint is k3s's --disable-default-registry-endpoint,
	// also settable in the file: a registry that has a mirror entry (its
	// own or "*") is pulled from its mirrors only, never from the
	// registry itself. Registries without a mirror entry are pulled from
	// directly, as in k3s.
	DisableDefaultEndpoint bool `json:"disable_default_endpoint,omitempty"`
}

// Mirror lists the endpoints tried, in order, before the registry itself.
type Mirror struct {
	Endpoints []string `json:"endpoint,omitempty"`
}

// RegistryConfig holds credentials and TLS settings for one host.
type RegistryConfig struct {
	Auth *AuthConfig `json:"auth,omitempty"`
	TLS  *TLSConfig  `json:"tls,omitempty"`
}

// AuthConfig is a username and password.
type AuthConfig struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// TLSConfig are the TLS settings for a host.
type TLSConfig struct {
	CAFile             string `json:"ca_file,omitempty"`
	CertFile           string `json:"cert_file,omitempty"`
	KeyFile            string `json:"key_file,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

// LoadRegistries reads a registries.yaml file; an empty path gives no
// mirrors.
func LoadRegistries(path string) (*Registries, error) {
	if path == "" {
		return &Registries{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading registries config: %w", err)
	}
	return ParseRegistries(data)
}

// ParseRegistries parses and checks a registries.yaml document.
func ParseRegistries(data []byte) (*Registries, error) {
	var r Registries
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return nil, fmt.Errorf("parsing registries config: %w", err)
	}
	var errs []error
	for host, m := range r.Mirrors {
		for _, ep := range m.Endpoints {
			if _, err := parseEndpoint(ep); err != nil {
				errs = append(errs, fmt.Errorf("mirrors[%q]: %w", host, err))
			}
		}
	}
	for host, c := range r.Configs {
		if c.TLS != nil && (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
			errs = append(errs, fmt.Errorf("configs[%q].tls: cert_file and key_file go together", host))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &r, nil
}

// Endpoint is one place a registry's API is served.
type Endpoint struct {
	Scheme, Host, Path string
}

// parseEndpoint reads "http://127.0.0.1:5000" or "https://mirror/v2"; a
// missing scheme means https, a missing path /v2.
func parseEndpoint(s string) (Endpoint, error) {
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("invalid endpoint %q: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Endpoint{}, fmt.Errorf("invalid endpoint %q: scheme must be http or https", s)
	}
	if u.Host == "" {
		return Endpoint{}, fmt.Errorf("invalid endpoint %q: no host", s)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if p == "" {
		p = "/v2"
	}
	return Endpoint{Scheme: u.Scheme, Host: u.Host, Path: p}, nil
}

// Endpoints lists where images of a registry host are pulled from, in
// order: its mirrors (those of "*" when it has none), then the registry
// itself (docker.io is served by registry-1.docker.io; localhost and
// loopback registries speak plain HTTP, as containerd assumes). With
// DisableDefaultEndpoint, a host with a mirror entry gets its mirrors only.
func (r *Registries) Endpoints(host string) []Endpoint {
	out, mirrored := r.mirrors(host)
	if mirrored && r.DisableDefaultEndpoint {
		return out
	}
	return append(out, DefaultEndpoint(host))
}

// mirrors are the parsed mirror endpoints of host, and whether it has a
// mirror entry at all.
func (r *Registries) mirrors(host string) ([]Endpoint, bool) {
	m, ok := r.Mirrors[host]
	if !ok {
		m, ok = r.Mirrors["*"]
	}
	var out []Endpoint
	for _, ep := range m.Endpoints {
		e, err := parseEndpoint(ep)
		if err == nil {
			out = append(out, e)
		}
	}
	return out, ok
}

// DefaultEndpoint is the registry host's own API endpoint, containerd's
// default.
func DefaultEndpoint(host string) Endpoint {
	def := Endpoint{Scheme: "https", Host: host, Path: "/v2"}
	if host == "docker.io" {
		def.Host = "registry-1.docker.io"
	}
	if local, _ := docker.MatchLocalhost(host); local {
		def.Scheme = "http"
	}
	return def
}

// String is the endpoint as a URL.
func (e Endpoint) String() string { return e.Scheme + "://" + e.Host + e.Path }

// PullError says where a failed pull of ref was tried when the registry
// is mirrored: the mirrors by their URLs, and that the registry itself
// was not asked when the default endpoint is disabled. Other errors are
// returned as they are.
func (r *Registries) PullError(ref string, err error) error {
	if err == nil {
		return nil
	}
	host := Host(ref)
	mirrors, mirrored := r.mirrors(host)
	if host == "" || !mirrored {
		return err
	}
	urls := make([]string, 0, len(mirrors))
	for _, m := range mirrors {
		urls = append(urls, m.String())
	}
	where := "mirror " + strings.Join(urls, ", mirror ")
	if len(urls) == 0 {
		where = "no mirror (the entry of " + host + " lists no endpoint)"
	}
	if r.DisableDefaultEndpoint {
		return fmt.Errorf("pulling %s from %s; the default endpoint %s is disabled: %w", ref, where, DefaultEndpoint(host), err)
	}
	return fmt.Errorf("pulling %s from %s, then %s: %w", ref, where, DefaultEndpoint(host), err)
}

// Hosts is the RegistryHosts function for containerd's docker resolver.
func (r *Registries) Hosts() docker.RegistryHosts { return r.HostsWithCreds(nil) }

// Creds returns the username and password for a registry host, if it has
// them.
type Creds func(host string) (username, password string, ok bool)

// HostsWithCreds is Hosts with credentials (a pod's image pull secrets)
// tried before those of the configuration.
func (r *Registries) HostsWithCreds(creds Creds) docker.RegistryHosts {
	return func(host string) ([]docker.RegistryHost, error) {
		eps := r.Endpoints(host)
		if len(eps) == 0 {
			return nil, fmt.Errorf("registry %s: its mirror entry lists no endpoint and the default endpoint %s is disabled", host, DefaultEndpoint(host))
		}
		var out []docker.RegistryHost
		for i, ep := range eps {
			client, err := r.httpClient(ep.Host)
			if err != nil {
				return nil, err
			}
			caps := docker.HostCapabilityPull | docker.HostCapabilityResolve
			last := i == len(eps)-1
			if last {
				caps |= docker.HostCapabilityPush
			}
			out = append(out, docker.RegistryHost{
				Client:       client,
				Authorizer:   r.authorizer(client, creds),
				Host:         ep.Host,
				Scheme:       ep.Scheme,
				Path:         ep.Path,
				Capabilities: caps,
			})
		}
		return out, nil
	}
}

func (r *Registries) authorizer(client *http.Client, creds Creds) docker.Authorizer {
	return docker.NewDockerAuthorizer(docker.WithAuthClient(client), docker.WithAuthCreds(func(host string) (string, string, error) {
		if creds != nil {
			if u, p, ok := creds(host); ok {
				return u, p, nil
			}
		}
		if c, ok := r.Configs[host]; ok && c.Auth != nil {
			return c.Auth.Username, c.Auth.Password, nil
		}
		return "", "", nil
	}))
}

func (r *Registries) httpClient(host string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 60 * time.Second
	c, ok := r.Configs[host]
	if ok && c.TLS != nil {
		tc := &tls.Config{InsecureSkipVerify: c.TLS.InsecureSkipVerify} //nolint:gosec // the user asked for it
		if c.TLS.CAFile != "" {
			pem, err := os.ReadFile(c.TLS.CAFile)
			if err != nil {
				return nil, fmt.Errorf("registry %s: %w", host, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("registry %s: no certificate in %s", host, c.TLS.CAFile)
			}
			tc.RootCAs = pool
		}
		if c.TLS.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(c.TLS.CertFile, c.TLS.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("registry %s: %w", host, err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		tr.TLSClientConfig = tc
	}
	return &http.Client{Transport: tr}, nil
}
