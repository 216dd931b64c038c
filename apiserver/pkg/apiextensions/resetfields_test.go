package apiextensions

import (
	"testing"

	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/registry/rest"
)

// The fields server-side apply resets through each endpoint of a CRD and
// of a custom resource: the status through the main resource when there is
// a status subresource, the spec through status.
func TestResetFields(t *testing.T) {
	crd := CRDResource()
	for _, tc := range []struct {
		name     string
		strategy rest.Strategy
		want     []fieldpath.Path
	}{
		{"crd", crd.Strategy, []fieldpath.Path{fieldpath.MakePathOrDie("status")}},
		{"crd status", crd.StatusStrategy, []fieldpath.Path{fieldpath.MakePathOrDie("spec")}},
		{"custom without status", customStrategy{}, nil},
		{"custom with status", customStrategy{hasStatus: true}, []fieldpath.Path{fieldpath.MakePathOrDie("status")}},
		{"custom status", customStrategy{hasStatus: true, statusEndpoint: true}, []fieldpath.Path{fieldpath.MakePathOrDie("spec")}},
	} {
		rs, ok := tc.strategy.(rest.ResetFieldsStrategy)
		if !ok {
			t.Fatalf("%s: %T has no reset fields", tc.name, tc.strategy)
		}
		if got, want := fieldpath.NewSet(rs.GetResetFields()...), fieldpath.NewSet(tc.want...); !got.Equals(want) {
			t.Errorf("%s: reset fields = %v, want %v", tc.name, got, want)
		}
	}
}
