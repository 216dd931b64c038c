package integration

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Endpoints that only create (reviews, bindings, token requests) have no
// Table of what they answer: a client that accepts nothing else gets 406
// before anything is done, one that accepts JSON too gets JSON, as
// upstream's negotiation for endpoints without a table convertor.
func TestTableOnlyWhereThereIsOne(t *testing.T) {
	ts := start(t, nil)
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	if _, err := ts.Client.CoreV1().Pods("default").Create(ctx(t), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ssar := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`
	tests := []struct {
		name, method, path, accept, body string
		wantCode                         int
		wantIn                           string
	}{
		{name: "self subject access review as Table", method: http.MethodPost, path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			accept: table, body: ssar, wantCode: http.StatusNotAcceptable, wantIn: `"reason":"NotAcceptable"`},
		{name: "self subject access review as Table or JSON", method: http.MethodPost, path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			accept: table + ", application/json", body: ssar, wantCode: http.StatusCreated, wantIn: `"kind":"SelfSubjectAccessReview"`},
		{name: "token review as Table", method: http.MethodPost, path: "/apis/authentication.k8s.io/v1/tokenreviews",
			accept: table, body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"test-user-token"}}`, wantCode: http.StatusNotAcceptable},
		{name: "binding as Table", method: http.MethodPost, path: "/api/v1/namespaces/default/pods/p/binding",
			accept: table, body: `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"node-1"}}`, wantCode: http.StatusNotAcceptable},
		{name: "a pod as Table", method: http.MethodGet, path: "/api/v1/namespaces/default/pods/p",
			accept: table, wantCode: http.StatusOK, wantIn: `"kind":"Table"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			code, out := rawAccept(t, ts, tc.method, tc.path, "application/json", tc.accept, body)
			if code != tc.wantCode || !strings.Contains(string(out), tc.wantIn) {
				t.Errorf("%d %s, want %d with %s", code, out, tc.wantCode, tc.wantIn)
			}
		})
	}
	// The refused binding did nothing.
	p, err := ts.Client.CoreV1().Pods("default").Get(ctx(t), "p", metav1.GetOptions{})
	if err != nil || p.Spec.NodeName != "" {
		t.Errorf("pod after a refused binding: %v, nodeName %q", err, p.Spec.NodeName)
	}
}
