package printers

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestPrintAdmissionPolicies(t *testing.T) {
	created := ago(2 * time.Hour)
	meta := metav1.ObjectMeta{Name: "x", CreationTimestamp: created}
	tests := []struct {
		name    string
		obj     runtime.Object
		columns []string
		want    []interface{}
	}{
		{
			name: "policy without paramKind",
			obj: &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				Validations: []admissionregistrationv1.Validation{{Expression: "true"}, {Expression: "false"}},
			}},
			columns: []string{"Name", "Validations", "ParamKind", "Age"},
			want:    []interface{}{"x", int64(2), "<unset>", "120m"},
		},
		{
			name: "policy with paramKind",
			obj: &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			}},
			columns: []string{"Name", "Validations", "ParamKind", "Age"},
			want:    []interface{}{"x", int64(0), "v1/ConfigMap", "120m"},
		},
		{
			name:    "binding without paramRef",
			obj:     &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p"}},
			columns: []string{"Name", "PolicyName", "ParamRef", "Age"},
			want:    []interface{}{"x", "p", "<unset>", "120m"},
		},
		{
			name: "binding with a namespaced paramRef",
			obj: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: "p", ParamRef: &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "ns"},
			}},
			columns: []string{"Name", "PolicyName", "ParamRef", "Age"},
			want:    []interface{}{"x", "p", "ns/limits", "120m"},
		},
		{
			name: "binding with a paramRef without namespace",
			obj: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: "p", ParamRef: &admissionregistrationv1.ParamRef{Name: "limits"},
			}},
			columns: []string{"Name", "PolicyName", "ParamRef", "Age"},
			want:    []interface{}{"x", "p", "*/limits", "120m"},
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCells(t, cells(t, p, tt.obj), tt.want)
			table, err := p.Table(tt.obj, false)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range table.ColumnDefinitions {
				if c.Name != tt.columns[i] {
					t.Errorf("column %d: %q, want %q", i, c.Name, tt.columns[i])
				}
			}
		})
	}
}
