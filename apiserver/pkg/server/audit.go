package server

import (
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/audit"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/endpoints"
)

func auditUser(u *authn.User) *audit.User {
	if u == nil {
		return nil
	}
	return &audit.User{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// auditRequest writes the audit line of one finished request.
func (s *Server) auditRequest(r *http.Request, id string, requester, effective *authn.User, code int, start time.Time, annotations map[string]string) {
	now := time.Now()
	ev := &audit.Event{
		AuditID: id, RequestURI: r.URL.RequestURI(), UserAgent: r.UserAgent(),
		ResponseStatus:           audit.ResponseStatus{Code: code},
		RequestReceivedTimestamp: start.UTC(), StageTimestamp: now.UTC(),
		Annotations: map[string]string{"skiff.dev/latency": now.Sub(start).String()},
	}
	// What admission plugins annotated (ValidatingAdmissionPolicy's Audit
	// action and auditAnnotations).
	for k, v := range annotations {
		ev.Annotations[k] = v
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		ev.SourceIPs = []string{host}
	}
	switch {
	case requester == nil:
		ev.User = audit.User{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	default:
		ev.User = *auditUser(requester)
		if effective != nil && effective != requester {
			ev.ImpersonatedUser = auditUser(effective)
		}
	}
	a := attributesFor(r, effective)
	ev.Verb = a.Verb
	if info := endpoints.ParseRequestInfo(r); info != nil {
		ev.ObjectRef = &audit.ObjectRef{Resource: info.Resource, Namespace: info.Namespace, Name: info.Name,
			APIGroup: info.Group, APIVersion: info.Version, Subresource: info.Subresource}
	}
	if err := s.audit.Log(ev); err != nil {
		klog.FromContext(r.Context()).Error(err, "writing the audit log")
	}
}
