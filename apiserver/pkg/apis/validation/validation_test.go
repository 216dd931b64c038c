package validation

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDefaultedSeedObjectsAreValid(t *testing.T) {
	checkErrs(t, ValidatePod(validPod()), nil)
	checkErrs(t, ValidateReplicaSet(validReplicaSet()), nil)
	checkErrs(t, ValidateDeployment(validDeployment()), nil)
	checkErrs(t, ValidateService(validService()), nil)
	checkErrs(t, ValidateNode(validNode()), nil)
	checkErrs(t, ValidateEndpointSlice(validSlice()), nil)
}

func TestNameValidatorFor(t *testing.T) {
	tests := []struct {
		gk      schema.GroupKind
		name    string
		valid   bool
		unknown bool
	}{
		{gk: schema.GroupKind{Kind: "Namespace"}, name: "a.b", valid: false},
		{gk: schema.GroupKind{Kind: "Namespace"}, name: "team-a", valid: true},
		{gk: schema.GroupKind{Kind: "Service"}, name: "1web", valid: false},
		{gk: schema.GroupKind{Kind: "Service"}, name: "web", valid: true},
		{gk: schema.GroupKind{Kind: "Pod"}, name: "web.v1", valid: true},
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, name: "Web", valid: false},
		{gk: schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"}, name: "system:node", valid: true},
		{gk: schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}, name: "a/b", valid: false},
		{gk: schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, name: "kube-scheduler", valid: true},
		{gk: schema.GroupKind{Group: "batch", Kind: "Job"}, unknown: true},
	}
	for _, tc := range tests {
		fn, ok := NameValidatorFor(tc.gk)
		if ok == tc.unknown {
			t.Errorf("%v: known = %v", tc.gk, ok)
			continue
		}
		if tc.unknown {
			continue
		}
		if got := len(fn(tc.name, false)) == 0; got != tc.valid {
			t.Errorf("%v %q: valid = %v, want %v", tc.gk, tc.name, got, tc.valid)
		}
	}
}
