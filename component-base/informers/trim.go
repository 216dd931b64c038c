package informers

import "k8s.io/apimachinery/pkg/api/meta"

// TrimManagedFields is an informer transform that drops
// metadata.managedFields from cached objects, as upstream's controller
// manager and scheduler do: no controller reads them, and they are a large
// part of every object. An update sent from a trimmed object keeps the
// stored managedFields (the API server takes the live ones when a write
// has none).
func TrimManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
