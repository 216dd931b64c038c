package openapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

func customWidget() Resource {
	return Resource{
		Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true, ListKind: "WidgetList",
		Verbs:        []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
		Subresources: []Subresource{{Name: "status", Kind: "Widget", Verbs: []string{"get", "patch", "update"}}},
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{
			Type: spec.StringOrArray{"object"},
			Properties: map[string]spec.Schema{
				"spec": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Description: "The widget's spec.", Nullable: true}},
			},
		}},
	}
}

func TestExtendWithCustomResource(t *testing.T) {
	base := newTestSpec(t)
	s, err := base.Extend([]Resource{customWidget()})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.GroupVersions(); !slices.Contains(got, "apis/example.com/v1") || !slices.Contains(got, "apis/apps/v1") {
		t.Fatalf("GroupVersions() = %v", got)
	}
	if string(s.v3["apis/apps/v1"].json) != string(base.v3["apis/apps/v1"].json) {
		t.Error("Extend changed a built-in group-version's document")
	}

	doc := v3Doc(t, s, "apis/example.com/v1")
	def := at(t, doc, "components", "schemas", "com.example.v1.Widget").(map[string]interface{})
	if got := at(t, def, "properties", "spec", "description"); got != "The widget's spec." {
		t.Errorf("spec description = %v", got)
	}
	if got := at(t, def, "properties", "metadata", "allOf"); got == nil {
		t.Errorf("metadata does not refer to ObjectMeta: %v", def["properties"])
	}
	gvks := at(t, def, "x-kubernetes-group-version-kind").([]interface{})
	if len(gvks) != 1 || gvks[0].(map[string]interface{})["kind"] != "Widget" {
		t.Errorf("x-kubernetes-group-version-kind = %v", gvks)
	}
	patch := at(t, doc, "paths", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}", "patch", "requestBody", "content").(map[string]interface{})
	if _, ok := patch["application/strategic-merge-patch+json"]; ok {
		t.Error("a custom resource's PATCH offers strategic merge patch")
	}

	var v2 map[string]interface{}
	if err := json.Unmarshal(s.v2.json, &v2); err != nil {
		t.Fatal(err)
	}
	if _, ok := at(t, v2, "paths").(map[string]interface{})["/apis/example.com/v1/namespaces/{namespace}/widgets"]; !ok {
		t.Error("v2 lacks the custom resource's paths")
	}
	if _, ok := at(t, v2, "paths").(map[string]interface{})["/apis/apps/v1/namespaces/{namespace}/replicasets"]; !ok {
		t.Error("v2 lost the built-in paths")
	}
	if got := at(t, v2, "definitions", "com.example.v1.Widget", "properties", "spec").(map[string]interface{}); got["nullable"] != nil {
		t.Errorf("v2 keeps nullable: %v", got)
	}

	if _, err := base.Extend([]Resource{{Group: "apps", Version: "v1", Kind: "Thing", Resource: "things", Verbs: []string{"get"}, Schema: &spec.Schema{}}}); err == nil {
		t.Error("Extend accepted a group-version the base serves")
	}
}

func TestDynamicBuildsBaseOnceOnFirstUse(t *testing.T) {
	builds := 0
	base := &Spec{}
	d := NewDynamic(func() (*Spec, error) { builds++; return base, nil })
	if builds != 0 {
		t.Fatal("the base Spec was built before anyone asked for it")
	}
	for range 3 {
		if s, err := d.Current(); err != nil || s != base {
			t.Fatalf("Current() = %p, %v; want the base Spec", s, err)
		}
	}
	if builds != 1 {
		t.Errorf("the base Spec was built %d times, want once", builds)
	}
	other := &Spec{}
	d.Set(other)
	if s, _ := d.Current(); s != other {
		t.Error("Set did not replace the served Spec")
	}
	d.Set(nil)
	if s, _ := d.Current(); s != base || builds != 1 {
		t.Errorf("after Set(nil): served %p (base %p), %d builds", s, base, builds)
	}
	failing := NewDynamic(func() (*Spec, error) { return nil, errors.New("broken") })
	rec := httptest.NewRecorder()
	failing.ServeV2(rec, httptest.NewRequest(http.MethodGet, "/openapi/v2", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "broken") {
		t.Errorf("a failed build served %d %q", rec.Code, rec.Body.String())
	}
}
