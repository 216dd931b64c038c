package registry

import (
	"context"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kinds without status bump their generation as upstream's strategies do:
// on any change outside metadata, and an EndpointSlice also on a change of
// its labels.
func TestGenerationOfKindsWithoutStatus(t *testing.T) {
	slice := func(addr string, labels map[string]string) runtime.Object {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "s", Generation: 3, Labels: labels},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{addr}}},
		}
	}
	policy := func(pod string, labels map[string]string) runtime.Object {
		return &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 3, Labels: labels},
			Spec:       networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": pod}}},
		}
	}
	a := map[string]string{"x": "1"}
	b := map[string]string{"x": "2"}
	tests := []struct {
		name, kind string
		old, obj   runtime.Object
		want       int64
	}{
		{"slice endpoints changed", "EndpointSlice", slice("10.0.0.1", a), slice("10.0.0.2", a), 4},
		{"slice labels changed", "EndpointSlice", slice("10.0.0.1", a), slice("10.0.0.1", b), 4},
		{"slice unchanged", "EndpointSlice", slice("10.0.0.1", a), slice("10.0.0.1", a), 3},
		{"policy spec changed", "NetworkPolicy", policy("web", a), policy("db", a), 4},
		{"policy labels changed", "NetworkPolicy", policy("web", a), policy("web", b), 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := resourceOfKind(t, tc.kind)
			r.Strategy.PrepareForUpdate(context.Background(), tc.obj, tc.old)
			if got := tc.obj.(metav1.Object).GetGeneration(); got != tc.want {
				t.Errorf("generation = %d, want %d", got, tc.want)
			}
		})
	}
}
