package server

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/serviceaccount"
)

// serviceAccountKeyFiles are the files of the keys that verify service
// account tokens: --service-account-key-file, else the signing key.
func serviceAccountKeyFiles(o *Options) []string {
	if len(o.ServiceAccountKeyFiles) == 0 && o.ServiceAccountSigningKeyFile != "" {
		return []string{o.ServiceAccountSigningKeyFile}
	}
	return o.ServiceAccountKeyFiles
}

// openIDMaxAge is how long clients may cache the documents; the keys are
// read once at start, as upstream's static keys (max-age 3600).
const openIDMaxAge = 3600

// installOpenIDMetadata serves service account issuer discovery, as
// upstream's pkg/routes/openidmetadata.go: the OIDC configuration and the
// JWKS of the keys that verify service account tokens. They are
// non-resource URLs, authorized as any other (the bootstrap role
// system:service-account-issuer-discovery). As upstream, an issuer OIDC
// does not allow leaves them unserved, with an error in the log.
func (s *Server) installOpenIDMetadata(r *mux.Router) {
	files := serviceAccountKeyFiles(s.opts)
	if len(files) == 0 {
		return
	}
	keys, err := serviceaccount.LoadPublicKeys(files)
	if err == nil {
		var md *serviceaccount.OpenIDMetadata
		external := net.JoinHostPort(s.advertise, strconv.Itoa(s.Port()))
		md, err = serviceaccount.NewOpenIDMetadata(s.opts.ServiceAccountIssuer, s.opts.ServiceAccountJWKSURI, external, keys)
		if err == nil {
			r.Handle(serviceaccount.OpenIDConfigPath, serveCached(md.ConfigJSON, "application/json")).Methods(http.MethodGet)
			r.Handle(serviceaccount.JWKSPath, serveCached(md.KeysetJSON, "application/jwk-set+json")).Methods(http.MethodGet)
			return
		}
	}
	klog.Background().Error(err, "service account issuer discovery is not served")
}

func serveCached(body []byte, contentType string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", openIDMaxAge))
		_, _ = w.Write(body)
	})
}
