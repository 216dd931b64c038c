package cli

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// ExplainConfigError turns a kubeconfig loading error into advice.
func ExplainConfigError(err error) error {
	if err == nil {
		return nil
	}
	if clientcmd.IsEmptyConfig(err) {
		return fmt.Errorf("no kubeconfig found: pass --kubeconfig, set KUBECONFIG, or write ~/.kube/config " +
			"(make up writes .skiff/admin.kubeconfig)")
	}
	return fmt.Errorf("kubeconfig: %w", err)
}

// Explain rewrites err into a message a person can act on. server is the
// API server URL, for connection errors. It returns err unchanged when it
// has nothing to add.
func Explain(err error, server string) error {
	if err == nil {
		return nil
	}
	var unk *UnknownKindError
	if errors.As(err, &unk) {
		return err
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		explained := explainStatus(status.Status(), status.(error))
		// Keep the context that wrapped the API error.
		if inner := status.(error).Error(); inner != err.Error() && strings.Contains(err.Error(), inner) {
			explained.msg = strings.Replace(err.Error(), inner, explained.msg, 1)
		}
		return explained
	}
	if msg := explainTransport(err, server); msg != "" {
		return errors.New(msg)
	}
	return err
}

// explainTransport handles failures to reach or trust the server.
func explainTransport(err error, server string) string {
	var cinv x509.CertificateInvalidError
	if errors.As(err, &cinv) {
		if cinv.Reason == x509.Expired {
			return fmt.Sprintf("the API server's certificate is not valid now (%s): renew it "+
				"(skiffctl certs rewrites expired certificates) or check this machine's clock", cinv.Detail)
		}
		return fmt.Sprintf("the API server's certificate is not valid: %v", cinv)
	}
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &unknownCA) {
		return fmt.Sprintf("the API server at %s presented a certificate that the kubeconfig's CA did not sign: "+
			"the kubeconfig belongs to another cluster, or the cluster's CA was regenerated", server)
	}
	var host x509.HostnameError
	if errors.As(err, &host) {
		return fmt.Sprintf("the API server's certificate does not cover the address used (%v): "+
			"add it with skiffctl certs --apiserver-san", host)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Sprintf("cannot reach the API server at %s: connection refused; is skiff-apiserver "+
			"running (make up), and is this the right server (skiffctl config view)?", server)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Sprintf("cannot resolve the API server's host %q: %v", dnsErr.Name, dnsErr.Err)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.Timeout() {
		return fmt.Sprintf("the API server at %s did not answer in time: %v", server, uerr.Err)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return fmt.Sprintf("cannot reach the API server at %s: %v", server, opErr.Err)
	}
	if strings.Contains(err.Error(), "remote error: tls: expired certificate") ||
		strings.Contains(err.Error(), "remote error: tls: bad certificate") {
		return fmt.Sprintf("the API server rejected the client certificate (%v): it is expired or not signed "+
			"by the cluster CA; renew it with skiffctl certs", err)
	}
	return ""
}

// explainStatus formats an API error as kubectl does ("Error from server
// (Reason): message") and adds what the Status details say.
func explainStatus(st metav1.Status, err error) *ExplainedError {
	reason := string(st.Reason)
	if reason == "" {
		reason = fmt.Sprintf("%d", st.Code)
	}
	msg := st.Message
	if msg == "" {
		msg = err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Error from server (%s): %s", reason, msg)
	switch st.Code {
	case 401:
		b.WriteString("\n  the server did not accept the credentials of the kubeconfig user " +
			"(expired or foreign client certificate, or unknown token)")
	case 403:
		if who := forbiddenWho(msg); who != "" {
			fmt.Fprintf(&b, "\n  %s", who)
		}
	case 422:
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				if c.Field != "" && !strings.Contains(msg, c.Field+":") {
					fmt.Fprintf(&b, "\n  %s: %s", c.Field, c.Message)
				}
			}
		}
	case 409:
		switch {
		case applyConflict(st):
			b.WriteString("\n  other field managers own these fields: to take them over, run apply again with --force-conflicts;" +
				"\n  to leave them to their managers, remove them from the manifest")
		case st.Reason == metav1.StatusReasonConflict:
			b.WriteString("\n  the object changed since it was read; run the command again")
		}
	}
	return &ExplainedError{msg: b.String(), Status: st}
}

// forbiddenWho extracts the user and the request from a Forbidden message
// (User "x" cannot get resource "pods" ...) into a one-line summary.
func forbiddenWho(msg string) string {
	user, rest, ok := strings.Cut(msg, `User "`)
	_ = user
	if !ok {
		return ""
	}
	name, rest, ok := strings.Cut(rest, `"`)
	if !ok {
		return ""
	}
	_, action, ok := strings.Cut(rest, "cannot ")
	if !ok {
		return ""
	}
	if i := strings.Index(action, ": "); i >= 0 {
		action = action[:i]
	}
	return fmt.Sprintf("who: %s; what: %s; grant it with a Role or ClusterRole and a binding", name, action)
}

// ExplainedError is an API error with its message rewritten.
type ExplainedError struct {
	msg    string
	Status metav1.Status
}

func (e *ExplainedError) Error() string { return e.msg }

// CheckClientCertificate returns an error when the client certificate of
// the configuration has expired or is not yet valid, before any request
// fails with an unhelpful 401.
func CheckClientCertificate(certPEM []byte, now time.Time) error {
	certs, err := parsePEMCertificates(certPEM)
	if err != nil || len(certs) == 0 {
		return nil
	}
	c := certs[0]
	if now.After(c.NotAfter) {
		return fmt.Errorf("the client certificate of the kubeconfig user (CN=%s) expired at %s; "+
			"renew it with skiffctl certs", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(c.NotBefore) {
		return fmt.Errorf("the client certificate of the kubeconfig user (CN=%s) is not valid before %s; "+
			"check this machine's clock", c.Subject.CommonName, c.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// applyConflict reports a server-side apply's conflict with other field
// managers (causes of type FieldManagerConflict), which running the command
// again does not resolve.
func applyConflict(st metav1.Status) bool {
	if st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}
