package server

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/admission/validatingpolicy"
	"skiff.dev/apiserver/pkg/authz"
)

// newPolicyPlugin builds the ValidatingAdmissionPolicy plugin over the
// server's stores; runAuthorizerFeeds keeps its policies and bindings
// current.
func (s *Server) newPolicyPlugin(objs admission.Objects) (*validatingpolicy.Plugin, error) {
	return validatingpolicy.New(validatingpolicy.Config{
		Objects: objs,
		Namespace: func(ctx context.Context, name string) (*corev1.Namespace, error) {
			obj, err := s.store("", "namespaces").Get(ctx, "", name)
			if err != nil {
				return nil, err
			}
			ns, ok := obj.(*corev1.Namespace)
			if !ok {
				return nil, fmt.Errorf("expected a Namespace, got %T", obj)
			}
			return ns, nil
		},
		Kinds: s.resolveParamKind,
		// The server's authorizer is built after the plugin.
		Authorizer: authz.AuthorizerFunc(func(ctx context.Context, a authz.Attributes) (authz.Decision, string, error) {
			return s.authorizer.Authorize(ctx, a)
		}),
	})
}

// resolveParamKind finds the served resource of a policy's paramKind.
func (s *Server) resolveParamKind(apiVersion, kind string) (group, resource string, namespaced, ok bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "", "", false, false
	}
	for _, st := range s.stores {
		if st.R.Group == gv.Group && st.R.Version == gv.Version && st.R.Kind == kind {
			return st.R.Group, st.R.Resource, st.R.Namespaced, true
		}
	}
	return "", "", false, false
}

// policyFeeds are the watch feeds of the ValidatingAdmissionPolicy plugin.
func (s *Server) policyFeeds() []authzFeed {
	if s.policies == nil {
		return nil
	}
	return []authzFeed{
		{s.store("admissionregistration.k8s.io", "validatingadmissionpolicies"), s.policies.Apply, s.policies.ResetPolicies, nil},
		{s.store("admissionregistration.k8s.io", "validatingadmissionpolicybindings"), s.policies.Apply, s.policies.ResetBindings, nil},
	}
}

// notesWriter adds the warnings admission recorded for the request to the
// response headers, just before they are written.
type notesWriter struct {
	*statusRecorder
	notes *admission.Notes
}

func (w *notesWriter) flushWarnings() {
	for _, msg := range w.notes.TakeWarnings() {
		addWarningHeader(w.Header(), msg)
	}
}

func (w *notesWriter) WriteHeader(code int) {
	w.flushWarnings()
	w.statusRecorder.WriteHeader(code)
}

func (w *notesWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.flushWarnings()
	}
	return w.statusRecorder.Write(b)
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *notesWriter) Unwrap() http.ResponseWriter { return w.statusRecorder }

// addWarningHeader writes an RFC 7234 warning as upstream: code 299, agent
// "-", the text quoted.
func addWarningHeader(h http.Header, msg string) {
	h.Add("Warning", fmt.Sprintf("299 - %q", msg))
}
