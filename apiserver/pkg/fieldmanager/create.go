package fieldmanager

import (
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/fastpath"
)

// Create is UpdateNoErrors(empty, obj, manager) for a create: empty is the
// empty object of the kind, the live object of a create. For a built-in
// kind written through its main resource, when obj has no managed fields,
// the fast path fastpath.CreateFields records the creator's fields at a
// fraction of the cost; otherwise, or when the object holds anything it
// does not handle exactly as upstream, UpdateNoErrors does.
func (m *Manager) Create(empty, obj runtime.Object, manager string) runtime.Object {
	if out, ok := m.createFields.Record(empty, obj, manager); ok {
		return out
	}
	return m.UpdateNoErrors(empty, obj, manager)
}

// CreateFields is the fast path Create takes for this manager's kind, nil
// when it takes upstream's path only (a custom resource, a subresource).
func (m *Manager) CreateFields() *fastpath.CreateFields { return m.createFields }
