package authn

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// RequestHeader authenticates requests from a front proxy, as upstream's
// --requestheader-* flags: a client certificate signed by ClientCAs (and,
// when AllowedNames is set, with one of those common names) vouches for
// the user named in the headers.
type RequestHeader struct {
	ClientCAs       *x509.CertPool
	AllowedNames    []string
	UsernameHeaders []string
	UIDHeaders      []string
	GroupHeaders    []string
	// ExtraHeaderPrefixes start the headers of the user's extra values; the
	// rest of the header name is the key, percent-decoded and lower-cased.
	ExtraHeaderPrefixes []string
}

// verify reports whether cert is a front proxy's; false when it does not
// chain to the request-header CA at all, so other authenticators may try.
func (h *RequestHeader) verify(certs []*x509.Certificate) (bool, error) {
	opts := x509.VerifyOptions{Roots: h.ClientCAs, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return false, nil
	}
	if len(h.AllowedNames) > 0 && !slices.Contains(h.AllowedNames, certs[0].Subject.CommonName) {
		return true, fmt.Errorf("%w: front-proxy certificate %q is not one of --requestheader-allowed-names", ErrUnauthorized, certs[0].Subject.CommonName)
	}
	return true, nil
}

// user reads the user from the headers.
func (h *RequestHeader) user(hdr http.Header) (*User, error) {
	u := &User{Name: firstHeader(hdr, h.UsernameHeaders), UID: firstHeader(hdr, h.UIDHeaders)}
	if u.Name == "" {
		return nil, fmt.Errorf("%w: a front-proxy request names no user in %v", ErrUnauthorized, h.UsernameHeaders)
	}
	for _, name := range h.GroupHeaders {
		u.Groups = append(u.Groups, hdr.Values(name)...)
	}
	for name, values := range hdr {
		for _, prefix := range h.ExtraHeaderPrefixes {
			if !strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) {
				continue
			}
			key, err := url.PathUnescape(name[len(prefix):])
			if err != nil {
				key = name[len(prefix):]
			}
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			key = strings.ToLower(key)
			u.Extra[key] = append(u.Extra[key], values...)
		}
	}
	return withAuthenticated(u), nil
}

func firstHeader(hdr http.Header, names []string) string {
	for _, n := range names {
		if v := hdr.Get(n); v != "" {
			return v
		}
	}
	return ""
}
