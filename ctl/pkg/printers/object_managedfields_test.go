package printers

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestManagedFieldsHiddenUnlessAsked(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "managedFields": []any{map[string]any{"manager": "kubectl"}}},
	}}
	for _, format := range []string{"yaml", "json", "jsonpath={.metadata}"} {
		for _, show := range []bool{false, true} {
			p, err := ParseOutput(format)
			if err != nil {
				t.Fatal(err)
			}
			p.ShowManagedFields = show
			var out bytes.Buffer
			if err := p.Print(&out, []*unstructured.Unstructured{obj}, true); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out.String(), "managedFields"); got != show {
				t.Errorf("-o %s, show %v: managedFields printed = %v:\n%s", format, show, got, out.String())
			}
			if !strings.Contains(out.String(), `c`) {
				t.Errorf("-o %s: the name is gone:\n%s", format, out.String())
			}
		}
	}
	if _, ok := obj.Object["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Error("printing changed the object")
	}
}
