package endpoints

import (
	"net/http/httptest"
	"testing"
)

// A list or watch with the field selector metadata.name=<name> names that
// object to the authorizer, as upstream's RequestInfoFactory.
func TestParseRequestInfoSelectedName(t *testing.T) {
	tests := []struct {
		url, verb, name, scope string
	}{
		{"/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%3Dextension-apiserver-authentication", "list", "extension-apiserver-authentication", "namespace"},
		{"/api/v1/namespaces/kube-system/configmaps?watch=true&fieldSelector=metadata.name%3Dx", "watch", "x", "namespace"},
		{"/api/v1/nodes?fieldSelector=metadata.name%3Dn1,spec.unschedulable%3Dfalse", "list", "n1", "cluster"},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%21%3Dx", "list", "", "namespace"},
		{"/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3D..", "list", "", "namespace"},
		{"/api/v1/namespaces/ns/configmaps", "list", "", "namespace"},
	}
	for _, tt := range tests {
		info := ParseRequestInfo(httptest.NewRequest("GET", tt.url, nil))
		if info == nil || info.Verb != tt.verb || info.Name != tt.name || info.Scope != tt.scope {
			t.Errorf("%s: got %+v, want verb %s name %q scope %s", tt.url, info, tt.verb, tt.name, tt.scope)
		}
	}
}
