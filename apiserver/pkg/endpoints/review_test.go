package endpoints

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"
	authorizationv1 "k8s.io/api/authorization/v1"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
)

// TestSelfSubjectRulesReview: the review asks for the request's user and
// the spec's namespace and answers the status alone, as upstream's REST:
// empty lists as [], an error as the evaluationError beside what
// resolved; no namespace, no user or a body that is not a review is a 400.
func TestSelfSubjectRulesReview(t *testing.T) {
	h := NewHandler(api.NewCodecs(), nil, nil)
	var asked []string
	pods := authorizationv1.ResourceRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	rules := func(_ context.Context, u *authn.User, namespace string) (authz.Rules, error) {
		asked = append(asked, u.Name+" in "+namespace)
		switch u.Name {
		case "nobody":
			return authz.Rules{}, nil
		case "system:node:vm":
			return authz.Rules{Resource: []authorizationv1.ResourceRule{pods}, Incomplete: true}, errors.New("node authorizer does not support user rule resolution")
		}
		return authz.Rules{Resource: []authorizationv1.ResourceRule{pods}}, nil
	}
	r := mux.NewRouter()
	h.InstallReviews(r, nil, rules)
	tests := []struct {
		name, user, body string
		wantCode         int
		wantBody         string
		wantAsked        string
	}{
		{name: "rules", user: "alice", body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"team"}}`,
			wantCode: http.StatusCreated, wantAsked: "alice in team",
			wantBody: `{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","metadata":{"creationTimestamp":null},"spec":{},` +
				`"status":{"resourceRules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}],"nonResourceRules":[],"incomplete":false}}`},
		{name: "no rules", user: "nobody", body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"team"}}`,
			wantCode: http.StatusCreated, wantAsked: "nobody in team",
			wantBody: `"status":{"resourceRules":[],"nonResourceRules":[],"incomplete":false}}`},
		{name: "incomplete", user: "system:node:vm", body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"team"}}`,
			wantCode: http.StatusCreated, wantAsked: "system:node:vm in team",
			wantBody: `"nonResourceRules":[],"incomplete":true,"evaluationError":"node authorizer does not support user rule resolution"}}`},
		{name: "no namespace", user: "alice", body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{}}`,
			wantCode: http.StatusBadRequest, wantBody: `"message":"no namespace on request","reason":"BadRequest"`},
		{name: "no user", body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"team"}}`,
			wantCode: http.StatusBadRequest, wantBody: `"message":"no user present on request"`},
		{name: "another kind", user: "alice", body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{}}`,
			wantCode: http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			req := httptest.NewRequest(http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.user != "" {
				req = req.WithContext(authn.WithUser(req.Context(), &authn.User{Name: tc.user}))
			}
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			body := strings.TrimSpace(w.Body.String())
			if w.Code != tc.wantCode || !strings.Contains(body, tc.wantBody) {
				t.Errorf("got %d %s\nwant %d with %s", w.Code, body, tc.wantCode, tc.wantBody)
			}
			if got := strings.Join(asked, ", "); got != tc.wantAsked {
				t.Errorf("asked %q, want %q", got, tc.wantAsked)
			}
		})
	}
}
