package apiextensions

import (
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func validCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"n": {Type: "integer"}}},
					},
				}},
			}},
		},
	}
	defaultCRD(crd)
	return crd
}

func TestValidateCRD(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*apiextensionsv1.CustomResourceDefinition)
		want   []string // substrings of the error list; none for a valid CRD
	}{
		{"valid", func(*apiextensionsv1.CustomResourceDefinition) {}, nil},
		{"name", func(c *apiextensionsv1.CustomResourceDefinition) { c.Name = "x.example.com" }, []string{`metadata.name: Invalid value: "x.example.com": must be spec.names.plural+"."+spec.group`}},
		{"group without dot", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Group = "example"; c.Name = "things.example" }, []string{`spec.group: Invalid value: "example": should be a domain with at least one dot`}},
		{"two storage versions", func(c *apiextensionsv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0]
			v.Name = "v2"
			c.Spec.Versions = append(c.Spec.Versions, v)
		}, []string{"spec.versions: Invalid value", "must have exactly one version marked as storage version"}},
		{"no schema", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Schema = nil }, []string{"spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"}},
		{"untyped field", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["n"] = apiextensionsv1.JSONSchemaProps{}
		}, []string{"spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[n].type: Required value: must not be empty for specified object fields"}},
		{"root not object", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Type = "string"
		}, []string{`spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root`}},
		{"scope", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "Everywhere" }, []string{`spec.scope: Unsupported value: "Everywhere"`}},
		{"kind missing", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Kind = "" }, []string{"spec.names.kind: Required value"}},
		{"printer column type", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "N", Type: "float", JSONPath: ".spec.n"}}
		}, []string{`spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "float"`}},
		{"scale path", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources = &apiextensionsv1.CustomResourceSubresources{Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".status.n", StatusReplicasPath: ".status.r"}}
		}, []string{`spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.n": should be a json path under .spec`}},
		{"webhook conversion without a webhook", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
		}, []string{`spec.conversion.webhook: Required value: required when strategy is set to Webhook`}},
		{"webhook conversion without a client or review versions", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v2"}}}
		}, []string{
			`spec.conversion.webhook.clientConfig: Required value: required when strategy is set to Webhook`,
			`spec.conversion.webhook.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1`,
		}},
		{"webhook conversion with both url and service", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"}, ClientConfig: &apiextensionsv1.WebhookClientConfig{
					URL: ptr.To("https://x"), Service: &apiextensionsv1.ServiceReference{Namespace: "n", Name: "s"}}}}
		}, []string{`spec.conversion.webhook.clientConfig: Required value: exactly one of url or service is required`}},
		{"unknown strategy", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: "Magic"}
		}, []string{`spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := validCRD()
			tt.modify(crd)
			errs := ValidateCRD(crd).ToAggregate()
			if len(tt.want) == 0 {
				if errs != nil {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if errs == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs.Error(), w) {
					t.Errorf("errors do not contain %q:\n%v", w, errs)
				}
			}
		})
	}
}

func TestValidateCRDUpdateImmutableOnceEstablished(t *testing.T) {
	old := validCRD()
	old.ResourceVersion = "1"
	setCondition(old, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue})
	crd := old.DeepCopy()
	crd.Spec.Scope = apiextensionsv1.ClusterScoped
	errs := ValidateCRDUpdate(crd, old).ToAggregate()
	if errs == nil || !strings.Contains(errs.Error(), "spec.scope: Invalid value: \"Cluster\": field is immutable") {
		t.Errorf("errors = %v", errs)
	}
}

func TestNamesConflict(t *testing.T) {
	other := *validCRD()
	other.Name = "others.example.com"
	other.Status.AcceptedNames = apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Other", ListKind: "OtherList"}
	tests := []struct {
		name   string
		names  apiextensionsv1.CustomResourceDefinitionNames
		group  string
		reason string
	}{
		{"plural taken", apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing", ListKind: "ThingList"}, "example.com", "PluralConflict"},
		{"kind taken", apiextensionsv1.CustomResourceDefinitionNames{Plural: "stuffs", Kind: "Other", ListKind: "StuffList"}, "example.com", "KindConflict"},
		{"short name taken", apiextensionsv1.CustomResourceDefinitionNames{Plural: "stuffs", Kind: "Stuff", ListKind: "StuffList", ShortNames: []string{"thing"}}, "example.com", "ShortNamesConflict"},
		{"other group", apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing", ListKind: "ThingList"}, "example.org", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := validCRD()
			crd.Spec.Group, crd.Spec.Names = tt.group, tt.names
			if reason, _ := namesConflict(crd, []apiextensionsv1.CustomResourceDefinition{other}); reason != tt.reason {
				t.Errorf("reason = %q, want %q", reason, tt.reason)
			}
		})
	}
}

func TestTablePrinter(t *testing.T) {
	p, err := newTablePrinter([]apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "N", Type: "integer", JSONPath: ".spec.n"},
		{Name: "Ready", Type: "boolean", JSONPath: ".status.ready"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return created.Add(90 * time.Second) }
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "a", "creationTimestamp": created.Format(time.RFC3339)},
		"spec":     map[string]any{"n": int64(3)},
	}}
	table, err := p.Table(&unstructured.UnstructuredList{Items: []unstructured.Unstructured{*u}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 4 || table.ColumnDefinitions[0].Name != "Name" {
		t.Errorf("columns = %+v", table.ColumnDefinitions)
	}
	cells := table.Rows[0].Cells
	if cells[0] != "a" || cells[1] != int64(3) || cells[2] != nil || cells[3] != "90s" {
		t.Errorf("cells = %#v", cells)
	}
	// No columns: NAME and AGE, as upstream.
	p, _ = newTablePrinter(nil)
	table, _ = p.Table(u, true)
	if len(table.ColumnDefinitions) != 0 || len(table.Rows[0].Cells) != 2 {
		t.Errorf("default columns without headers: %+v", table)
	}
}

func TestValidateCRDSchemaDetails(t *testing.T) {
	set := "set"
	tests := []struct {
		name string
		prop apiextensionsv1.JSONSchemaProps
		sfs  []apiextensionsv1.SelectableField
		want string
	}{
		{"default of the wrong type", apiextensionsv1.JSONSchemaProps{Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte(`"one"`)}},
			nil, `properties[spec].properties[x].default: Invalid value: "one"`},
		{"default with unknown fields", apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}}, Default: &apiextensionsv1.JSON{Raw: []byte(`{"b":"x"}`)}},
			nil, "must not have unknown fields: .b"},
		{"map list without keys", apiextensionsv1.JSONSchemaProps{Type: "array", XListType: ptrTo("map"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}},
			nil, "x-kubernetes-list-map-keys: Required value"},
		{"selectable field of an object", apiextensionsv1.JSONSchemaProps{Type: "object"},
			[]apiextensionsv1.SelectableField{{JSONPath: ".spec.x"}}, `selectableFields[0].jsonPath: Invalid value: ".spec.x": must point to a field of type string, boolean or integer`},
		{"selectable field under metadata", apiextensionsv1.JSONSchemaProps{Type: "string"},
			[]apiextensionsv1.SelectableField{{JSONPath: ".metadata.name"}}, "must not point to metadata"},
		{"valid set and selectable field", apiextensionsv1.JSONSchemaProps{Type: "string"},
			[]apiextensionsv1.SelectableField{{JSONPath: ".spec.x"}}, ""},
		{"valid set list", apiextensionsv1.JSONSchemaProps{Type: "array", XListType: &set, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := validCRD()
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["x"] = tt.prop
			crd.Spec.Versions[0].SelectableFields = tt.sfs
			errs := ValidateCRD(crd).ToAggregate()
			switch {
			case tt.want == "" && errs != nil:
				t.Errorf("unexpected errors: %v", errs)
			case tt.want != "" && (errs == nil || !strings.Contains(errs.Error(), tt.want)):
				t.Errorf("errors %v, want %q", errs, tt.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
