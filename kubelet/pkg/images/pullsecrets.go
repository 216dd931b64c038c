package images

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Credential is a username and password for one registry host.
type Credential struct {
	Host, Username, Password string
}

// dockerEntry is one registry in a docker config file.
type dockerEntry struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Auth     string `json:"auth"`
}

// CredentialsFromSecret reads the registry credentials of an image pull
// secret: type kubernetes.io/dockerconfigjson (.dockerconfigjson with
// "auths") or kubernetes.io/dockercfg (.dockercfg, the old format).
func CredentialsFromSecret(s *corev1.Secret) ([]Credential, error) {
	var entries map[string]dockerEntry
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		var cfg struct {
			Auths map[string]dockerEntry `json:"auths"`
		}
		if err := json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg); err != nil {
			return nil, fmt.Errorf("secret %s: invalid %s: %w", s.Name, corev1.DockerConfigJsonKey, err)
		}
		entries = cfg.Auths
	case corev1.SecretTypeDockercfg:
		if err := json.Unmarshal(s.Data[corev1.DockerConfigKey], &entries); err != nil {
			return nil, fmt.Errorf("secret %s: invalid %s: %w", s.Name, corev1.DockerConfigKey, err)
		}
	default:
		return nil, fmt.Errorf("secret %s has type %q, not %s", s.Name, s.Type, corev1.SecretTypeDockerConfigJson)
	}
	var out []Credential
	for key, e := range entries {
		user, pass := e.Username, e.Password
		if e.Auth != "" {
			dec, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("secret %s: auth of %s is not base64", s.Name, key)
			}
			u, p, ok := strings.Cut(string(dec), ":")
			if !ok {
				return nil, fmt.Errorf("secret %s: auth of %s is not user:password", s.Name, key)
			}
			user, pass = u, p
		}
		out = append(out, Credential{Host: RegistryHost(key), Username: user, Password: pass})
	}
	return out, nil
}

// RegistryHost normalises a docker config key ("https://index.docker.io/v1/",
// "registry.example:5000/path") to the host that images name
// ("docker.io", "registry.example:5000").
func RegistryHost(key string) string {
	if i := strings.Index(key, "://"); i >= 0 {
		key = key[i+3:]
	}
	key, _, _ = strings.Cut(key, "/")
	switch key {
	case "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	}
	return key
}

// MatchCreds returns the Creds function for containerd's resolver: a
// credential applies to the registry host it names (docker.io to
// registry-1.docker.io); the first match wins.
func MatchCreds(creds []Credential) Creds {
	if len(creds) == 0 {
		return nil
	}
	return func(host string) (string, string, bool) {
		h := RegistryHost(host)
		for _, c := range creds {
			if c.Host == h {
				return c.Username, c.Password, true
			}
		}
		return "", "", false
	}
}
