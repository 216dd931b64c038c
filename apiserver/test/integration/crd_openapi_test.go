package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"
)

// How custom resources appear in the Swagger 2.0 document, as upstream's
// CRD builder publishes them for v2: a schema that preserves unknown
// fields at the root is a bare object there (kubectl reads v2 schemas as
// closed), one that preserves them below the root loses that node's
// properties; the v3 document keeps the schema whole.
func TestCustomResourceOpenAPIV2(t *testing.T) {
	ts := start(t, nil)
	ext, _ := crdClients(t, ts)
	crd := func(kind string, schema *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
		plural := map[string]string{"Loose": "looses", "Nested": "nesteds"}[kind]
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".openapi.skiff.dev"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "openapi.skiff.dev", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema}}},
			},
		}
	}
	loose := crd("Loose", &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)})
	nested := crd("Nested", &apiextensionsv1.JSONSchemaProps{Type: "object", Description: "nested for testing",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true), Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"dummy": {Type: "string"},
			}},
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"count": {Type: "integer", Minimum: ptr.To(0.0)},
			}},
		}})
	for _, c := range []*apiextensionsv1.CustomResourceDefinition{loose, nested} {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var defs map[string]spec.Schema
	err := wait.PollUntilContextTimeout(ctx(t), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		code, body := raw(t, ts, http.MethodGet, "/openapi/v2", "", nil)
		if code != http.StatusOK {
			return false, nil
		}
		var sw spec.Swagger
		if err := json.Unmarshal(body, &sw); err != nil {
			return false, err
		}
		defs = sw.Definitions
		_, ok1 := defs["dev.skiff.openapi.v1.Loose"]
		_, ok2 := defs["dev.skiff.openapi.v1.Nested"]
		return ok1 && ok2, nil
	})
	if err != nil {
		t.Fatalf("the definitions were not published: %v", err)
	}
	// What upstream's e2e compares, after dropping what the server adds.
	dropAdded := func(s spec.Schema) spec.Schema {
		delete(s.Properties, "metadata")
		delete(s.Properties, "apiVersion")
		delete(s.Properties, "kind")
		delete(s.Extensions, "x-kubernetes-group-version-kind")
		return s
	}
	gotLoose := defs["dev.skiff.openapi.v1.Loose"]
	if gvk := gotLoose.Extensions["x-kubernetes-group-version-kind"]; gvk == nil {
		t.Errorf("Loose has no x-kubernetes-group-version-kind: %+v", gotLoose)
	}
	if want := (spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}); !equality.Semantic.DeepEqual(dropAdded(gotLoose), want) {
		got, _ := json.Marshal(gotLoose)
		t.Errorf("Loose in v2 = %s, want a bare object", got)
	}

	gotNested := dropAdded(defs["dev.skiff.openapi.v1.Nested"])
	specProp := gotNested.Properties["spec"]
	if len(specProp.Properties) != 0 || !preserves(specProp) || !specProp.Type.Contains("object") {
		got, _ := json.Marshal(specProp)
		t.Errorf("Nested spec in v2 = %s, want an object without properties that preserves unknown fields", got)
	}
	if st := gotNested.Properties["status"]; st.Properties["count"].Minimum == nil || gotNested.Description != "nested for testing" {
		got, _ := json.Marshal(gotNested)
		t.Errorf("Nested in v2 lost what v2 can say: %s", got)
	}

	// The v3 document keeps the properties below the preserving node.
	code, body := raw(t, ts, http.MethodGet, "/openapi/v3/apis/openapi.skiff.dev/v1", "", nil)
	var v3 struct {
		Components struct {
			Schemas map[string]spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &v3) != nil {
		t.Fatalf("v3: %d %.200s", code, body)
	}
	if p := v3.Components.Schemas["dev.skiff.openapi.v1.Nested"].Properties["spec"]; len(p.Properties) != 1 {
		t.Errorf("Nested spec in v3 has properties %v, want dummy", p.Properties)
	}
	if p := v3.Components.Schemas["dev.skiff.openapi.v1.Loose"]; !preserves(p) {
		t.Errorf("Loose in v3 does not preserve unknown fields: %+v", p)
	}
}

func preserves(s spec.Schema) bool {
	v, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields")
	return v
}
