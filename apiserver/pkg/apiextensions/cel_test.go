package apiextensions

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestRulesUseUpstreamLibraries: rules may call the functions of
// k8s.io/apiserver/pkg/cel/library (URLs, quantity, IP and CIDR, named
// formats, lists, regex) and the strings extension, and they evaluate as
// upstream's do.
func TestRulesUseUpstreamLibraries(t *testing.T) {
	rule := func(r string) string { return `"x-kubernetes-validations": [{"rule": ` + jsonString(r) + `}]` }
	s := mustSchema(t, `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "properties": {
        "url": {"type": "string", "maxLength": 256, `+rule("isURL(self) && url(self).getHostname() == 'example.com'")+`},
        "memory": {"type": "string", "maxLength": 32, `+rule("isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) <= 0")+`},
        "address": {"type": "string", "maxLength": 64, `+rule("isIP(self) && ip(self).family() == 4 && cidr('10.0.0.0/8').containsIP(ip(self))")+`},
        "subnet": {"type": "string", "maxLength": 64, `+rule("isCIDR(self) && cidr(self).prefixLength() >= 16")+`},
        "host": {"type": "string", "maxLength": 63, `+rule("!format.dns1123Label().validate(self).hasValue()")+`},
        "ports": {"type": "array", "maxItems": 16, "items": {"type": "integer"}, `+rule("self.isSorted() && self.sum() < 100000")+`},
        "image": {"type": "string", "maxLength": 128, `+rule("self.find('[0-9]+$') != '' && self.lowerAscii() == self")+`}
      }
    }
  }
}`)
	valid := `{"spec":{"url":"https://example.com/x","memory":"512Mi","address":"10.1.2.3","subnet":"10.1.0.0/16","host":"web-1","ports":[80,443],"image":"app1"}}`
	wantErrors(t, s.Validate(object(t, valid), nil), nil)
	invalid := `{"spec":{"url":"https://other.org/","memory":"2Gi","address":"192.168.0.1","subnet":"10.0.0.0/8","host":"Web_1","ports":[443,80],"image":"App"}}`
	wantErrors(t, s.Validate(object(t, invalid), nil), []string{
		`spec.address: Invalid value: "string": failed rule: isIP(self) && ip(self).family() == 4 && cidr('10.0.0.0/8').containsIP(ip(self))`,
		`spec.host: Invalid value: "string": failed rule: !format.dns1123Label().validate(self).hasValue()`,
		`spec.image: Invalid value: "string": failed rule: self.find('[0-9]+$') != '' && self.lowerAscii() == self`,
		`spec.memory: Invalid value: "string": failed rule: isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) <= 0`,
		`spec.ports: Invalid value: "array": failed rule: self.isSorted() && self.sum() < 100000`,
		`spec.subnet: Invalid value: "string": failed rule: isCIDR(self) && cidr(self).prefixLength() >= 16`,
		`spec.url: Invalid value: "string": failed rule: isURL(self) && url(self).getHostname() == 'example.com'`,
	})
}

func jsonString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// TestRuleCompileErrors: a CRD whose rule does not compile, or whose
// estimated cost is over upstream's limit, is refused with upstream's
// field, type and message; the same rule bounded by maxItems and
// maxLength is accepted.
func TestRuleCompileErrors(t *testing.T) {
	const rulePath = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule"
	withRule := func(rule string, maxItems, maxLength *int64) *apiextensionsv1.CustomResourceDefinition {
		crd := validCRD()
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["names"] = apiextensionsv1.JSONSchemaProps{
			Type: "array", MaxItems: maxItems,
			Items:        &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: maxLength}},
			XValidations: apiextensionsv1.ValidationRules{{Rule: rule}},
		}
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		return crd
	}
	pairwise := "self.all(x, self.all(y, x == y || !x.contains(y)))"
	tests := []struct {
		name           string
		crd            *apiextensionsv1.CustomResourceDefinition
		wantType       field.ErrorType
		wantDetailPart string
	}{
		{"unknown function", withRule("noSuchFunction(self)", nil, nil), field.ErrorTypeInvalid, "compilation failed: ERROR: <input>:1:15: undeclared reference to 'noSuchFunction'"},
		{"over the cost limit", withRule(pairwise, nil, nil), field.ErrorTypeForbidden,
			"estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"},
		{"bounded", withRule(pairwise, ptrTo(int64(10)), ptrTo(int64(10))), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateCRD(tt.crd)
			if tt.wantType == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			var found bool
			for _, e := range errs {
				if e.Field == rulePath && e.Type == tt.wantType && strings.Contains(e.Detail, tt.wantDetailPart) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s error at %s containing %q in %v", tt.wantType, rulePath, tt.wantDetailPart, errs)
			}
		})
	}
}
