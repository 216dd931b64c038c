package apiextensions

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// testSchema: spec with a defaulted integer, an enum, a preserved subtree,
// a list of objects and a map of strings.
const testSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["color"],
      "properties": {
        "replicas": {"type": "integer", "minimum": 0, "default": 1},
        "color": {"type": "string", "enum": ["red", "blue"]},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer", "default": 80}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}}
      }
    }
  }
}`

func mustSchema(t *testing.T, raw string) *Schema {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(raw), &props); err != nil {
		t.Fatal(err)
	}
	s, err := NewSchema(&props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func object(t *testing.T, raw string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := utiljson.Unmarshal([]byte(raw), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestPrune(t *testing.T) {
	s := mustSchema(t, testSchema)
	tests := []struct {
		name, in, want string
		pruned         []string
	}{
		{
			name:   "unknown fields at every level",
			in:     `{"apiVersion":"a/v1","kind":"K","metadata":{"name":"x"},"top":1,"spec":{"color":"red","bogus":true,"ports":[{"port":1,"x":2}]}}`,
			want:   `{"apiVersion":"a/v1","kind":"K","metadata":{"name":"x"},"spec":{"color":"red","ports":[{"port":1}]}}`,
			pruned: []string{"spec.bogus", "spec.ports[0].x", "top"},
		},
		{
			name: "preserved subtree and additionalProperties kept",
			in:   `{"spec":{"color":"red","extra":{"a":{"b":1}},"labels":{"k":"v"}}}`,
			want: `{"spec":{"color":"red","extra":{"a":{"b":1}},"labels":{"k":"v"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.in)
			pruned := s.Prune(obj)
			if !reflect.DeepEqual(obj, object(t, tt.want)) {
				t.Errorf("pruned object = %v, want %s", obj, tt.want)
			}
			if !slices.Equal(pruned, tt.pruned) {
				t.Errorf("pruned paths = %v, want %v", pruned, tt.pruned)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	s := mustSchema(t, testSchema)
	tests := []struct{ name, in, want string }{
		{"missing field", `{"spec":{"color":"red"}}`, `{"spec":{"color":"red","replicas":1}}`},
		{"null field", `{"spec":{"color":"red","replicas":null}}`, `{"spec":{"color":"red","replicas":1}}`},
		{"set field kept", `{"spec":{"color":"red","replicas":3}}`, `{"spec":{"color":"red","replicas":3}}`},
		{"in list items", `{"spec":{"color":"red","replicas":2,"ports":[{},{"port":8}]}}`, `{"spec":{"color":"red","replicas":2,"ports":[{"port":80},{"port":8}]}}`},
		{"no spec, nothing to default", `{}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.in)
			s.Default(obj)
			if !reflect.DeepEqual(obj, object(t, tt.want)) {
				t.Errorf("defaulted = %v, want %s", obj, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	s := mustSchema(t, testSchema)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"valid", `{"spec":{"color":"red","replicas":2}}`, nil},
		{"every violation named", `{"spec":{"color":"green","replicas":-1,"labels":{"k":1}}}`, []string{
			`spec.color: Unsupported value: "green": supported values: "red", "blue"`,
			"spec.labels.k: Invalid value: \"integer\": spec.labels.k in body must be of type string: \"integer\"",
			"spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
		}},
		{"required", `{"spec":{}}`, []string{"spec.color: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, s.Validate(object(t, tt.in), nil), tt.want)
		})
	}
}

func TestValidateListTypesAndIntOrString(t *testing.T) {
	s := mustSchema(t, `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "properties": {
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                  "items": {"type": "object", "properties": {"port": {"type": "integer"}, "name": {"type": "string"}}}},
        "target": {"x-kubernetes-int-or-string": true}
      }
    }
  }
}`)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"valid", `{"spec":{"tags":["a","b"],"ports":[{"port":1},{"port":2}],"target":8080}}`, nil},
		{"int-or-string takes a string", `{"spec":{"target":"http"}}`, nil},
		{"int-or-string refuses a bool", `{"spec":{"target":true}}`, []string{"spec.target: Invalid value: \"boolean\": spec.target in body must be of type integer,string: \"boolean\""}},
		{"duplicates", `{"spec":{"tags":["a","a"],"ports":[{"port":1,"name":"x"},{"port":1,"name":"y"}]}}`, []string{
			`spec.ports[1]: Duplicate value: map[string]interface {}{"port":1}`,
			`spec.tags[1]: Duplicate value: "a"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, s.Validate(object(t, tt.in), nil), tt.want)
		})
	}
}

func TestValidationRules(t *testing.T) {
	s := mustSchema(t, `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "x-kubernetes-validations": [
        {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed maxReplicas"},
        {"rule": "!has(self.name) || self.name.startsWith('w-')", "fieldPath": ".name"}
      ],
      "properties": {
        "replicas": {"type": "integer"},
        "maxReplicas": {"type": "integer"},
        "name": {"type": "string"},
        "endpoint": {"type": "string", "x-kubernetes-validations": [{"rule": "isURL(self) && url(self).getScheme() == 'https'", "message": "must be an https URL"}]},
        "memory": {"type": "string", "x-kubernetes-validations": [{"rule": "quantity(self).isLessThan(quantity('1Gi'))"}]},
        "ports": {"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0 && self < 65536"}]}}
      }
    }
  }
}`)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"valid", `{"spec":{"replicas":1,"maxReplicas":2,"name":"w-1","ports":[80]}}`, nil},
		{"message", `{"spec":{"replicas":3,"maxReplicas":2}}`, []string{`spec: Invalid value: "object": replicas must not exceed maxReplicas`}},
		{"fieldPath and default message", `{"spec":{"replicas":1,"maxReplicas":1,"name":"x"}}`, []string{`spec.name: Invalid value: "object": failed rule: !has(self.name) || self.name.startsWith('w-')`}},
		{"items", `{"spec":{"replicas":1,"maxReplicas":1,"ports":[80,0]}}`, []string{`spec.ports[1]: Invalid value: "integer": failed rule: self > 0 && self < 65536`}},
		{"kubernetes libraries", `{"spec":{"replicas":1,"maxReplicas":1,"endpoint":"http://a.b","memory":"2Gi"}}`, []string{
			`spec.endpoint: Invalid value: "string": must be an https URL`,
			`spec.memory: Invalid value: "string": failed rule: quantity(self).isLessThan(quantity('1Gi'))`,
		}},
		{"kubernetes libraries, valid", `{"spec":{"replicas":1,"maxReplicas":1,"endpoint":"https://a.b","memory":"512Mi"}}`, nil},
		{"missing field is an evaluation error", `{"spec":{"replicas":1}}`, []string{`spec: Invalid value: "object": no such key: maxReplicas evaluating rule: replicas must not exceed maxReplicas`}},
		{"rules wait for a well-typed object", `{"spec":{"replicas":"x","maxReplicas":1}}`, []string{
			"<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
			"spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, s.Validate(object(t, tt.in), nil), tt.want)
		})
	}
	var props apiextensionsv1.JSONSchemaProps
	_ = json.Unmarshal([]byte(`{"type":"object","x-kubernetes-validations":[{"rule":"self.a &&"}]}`), &props)
	if _, errs := compileSchemaRules(&props, nil); len(errs) != 1 || !strings.Contains(errs[0].Error(), "x-kubernetes-validations[0].rule: Invalid value: \"self.a &&\": compilation failed") {
		t.Errorf("a rule that does not parse: %v", errs)
	}
}

// TestTransitionRules: rules reading oldSelf run on updates, where the
// value has an old one (an object's property, a map entry, a listType=map
// item by key); optionalOldSelf runs them on create with oldSelf none;
// messageExpression and reason shape the error.
func TestTransitionRules(t *testing.T) {
	s := mustSchema(t, `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "properties": {
        "mode": {"type": "string", "x-kubernetes-validations": [
          {"rule": "self == oldSelf", "message": "mode is immutable", "reason": "FieldValueForbidden"}
        ]},
        "size": {"type": "integer", "x-kubernetes-validations": [
          {"rule": "self >= oldSelf", "messageExpression": "'size may not shrink from %d to %d'.format([oldSelf, self])"}
        ]},
        "owner": {"type": "string", "x-kubernetes-validations": [
          {"rule": "oldSelf.hasValue() || self == 'admin'", "optionalOldSelf": true, "message": "the first owner is admin"}
        ]},
        "disks": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
          "items": {"type": "object", "properties": {"name": {"type": "string"}, "gb": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.gb >= oldSelf.gb", "message": "a disk may not shrink"}]}},
        "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}
      }
    }
  }
}`)
	tests := []struct {
		name, in, old string
		want          []string
	}{
		{"create skips transition rules", `{"spec":{"mode":"a","size":1,"owner":"admin","disks":[{"name":"d","gb":5}],"tags":["x"]}}`, "", nil},
		{"optionalOldSelf runs on create", `{"spec":{"owner":"bob"}}`, "", []string{`spec.owner: Invalid value: "string": the first owner is admin`}},
		{"unchanged update", `{"spec":{"mode":"a","size":2,"owner":"bob"}}`, `{"spec":{"mode":"a","size":1,"owner":"admin"}}`, nil},
		{"reason and messageExpression", `{"spec":{"mode":"b","size":1}}`, `{"spec":{"mode":"a","size":3}}`, []string{
			`spec.mode: Forbidden: mode is immutable`,
			`spec.size: Invalid value: "integer": size may not shrink from 3 to 1`,
		}},
		{"a new property has no old value", `{"spec":{"mode":"b"}}`, `{"spec":{}}`, nil},
		{"map list items correlate by key", `{"spec":{"disks":[{"name":"new","gb":1},{"name":"d","gb":4}]}}`, `{"spec":{"disks":[{"name":"d","gb":5}]}}`, []string{
			`spec.disks[1]: Invalid value: "object": a disk may not shrink`,
		}},
		{"atomic list items do not correlate", `{"spec":{"tags":["y"]}}`, `{"spec":{"tags":["x"]}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old map[string]any
			if tt.old != "" {
				old = object(t, tt.old)
			}
			wantErrors(t, s.Validate(object(t, tt.in), old), tt.want)
		})
	}
	var props apiextensionsv1.JSONSchemaProps
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"a":{"type":"boolean"}},"x-kubernetes-validations":[{"rule":"self.a","optionalOldSelf":true}]}`), &props)
	if _, errs := compileSchemaRules(&props, nil); len(errs) != 1 || !strings.Contains(errs[0].Error(), "optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule") {
		t.Errorf("optionalOldSelf without oldSelf: %v", errs)
	}
}

// TestValidationRatcheting: on update, an error the old object had too, on
// a value the update left alone, does not block the update; a changed
// value, a new error, or a value under a changed list still fail.
func TestValidationRatcheting(t *testing.T) {
	s := mustSchema(t, `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "maxLength": 3},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "count": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 10"}]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}}
      }
    }
  }
}`)
	old := `{"spec":{"name":"toolong","mode":"z","count":50,"tags":["abc"],"labels":{"k":"long"}}}`
	tests := []struct {
		name, in string
		want     []string
	}{
		{"untouched invalid fields", `{"spec":{"name":"toolong","mode":"z","count":50,"tags":["abc"],"labels":{"k":"long","x":"ok"}}}`, nil},
		{"a changed invalid value fails", `{"spec":{"name":"stilltoolong","mode":"z","count":50,"tags":["abc"],"labels":{"k":"long"}}}`, []string{
			`spec.name: Too long: may not be more than 3 bytes`,
		}},
		{"a new error fails", `{"spec":{"name":"toolong","mode":"z","count":50,"tags":["abc"],"labels":{"k":"long","n":"new!"}}}`, []string{
			`spec.labels.n: Too long: may not be more than 2 bytes`,
		}},
		{"a changed list is checked whole", `{"spec":{"name":"toolong","mode":"z","count":50,"tags":["abc","ok"],"labels":{"k":"long"}}}`, []string{
			`spec.tags[0]: Too long: may not be more than 2 bytes`,
		}},
		{"a rule on a changed value", `{"spec":{"name":"toolong","mode":"z","count":51,"tags":["abc"],"labels":{"k":"long"}}}`, []string{
			`spec.count: Invalid value: "integer": failed rule: self < 10`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, s.ValidateUpdate(object(t, tt.in), object(t, old)), tt.want)
		})
	}
	// A create is never ratcheted.
	if errs := s.Validate(object(t, old), nil); len(errs) == 0 {
		t.Error("the old object validates")
	}
}

// wantErrors checks errs, in any order, against want (their Error()s).
func wantErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%q\nwant:\n%q", got, want)
	}
}
