package admission

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// NamespaceLifecycleName is upstream's plugin name.
const NamespaceLifecycleName = "NamespaceLifecycle"

// NamespaceLifecycle refuses new objects in a namespace that does not exist
// or is terminating, and the deletion of the system namespaces. It reads
// namespaces from memory (Apply feeds it from the watch cache) and asks
// Lookup when a namespace is not known yet, so a namespace created a moment
// ago is never refused.
type NamespaceLifecycle struct {
	mu         sync.RWMutex
	namespaces map[string]nsInfo
	// Lookup reads a namespace from storage when it is not in memory.
	Lookup func(ctx context.Context, name string) (*corev1.Namespace, error)
	// Immortal namespaces may not be deleted.
	Immortal map[string]bool
}

// NewNamespaceLifecycle returns the plugin.
func NewNamespaceLifecycle(lookup func(ctx context.Context, name string) (*corev1.Namespace, error), immortal ...string) *NamespaceLifecycle {
	n := &NamespaceLifecycle{namespaces: map[string]nsInfo{}, Lookup: lookup, Immortal: map[string]bool{}}
	for _, i := range immortal {
		n.Immortal[i] = true
	}
	return n
}

// Name implements Plugin.
func (*NamespaceLifecycle) Name() string { return NamespaceLifecycleName }

// Reset forgets every namespace, before the whole state is applied again.
func (n *NamespaceLifecycle) Reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.namespaces = map[string]nsInfo{}
}

// Apply records a namespace watch event.
func (n *NamespaceLifecycle) Apply(ev watch.Event) {
	ns, ok := ev.Object.(*corev1.Namespace)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		n.namespaces[ns.Name] = infoOf(ns)
	case watch.Deleted:
		delete(n.namespaces, ns.Name)
	}
}

var namespacesGR = schema.GroupResource{Resource: "namespaces"}

// Validate implements ValidationInterface.
func (n *NamespaceLifecycle) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group == "" && a.Resource.Resource == "namespaces" {
		if a.Operation == Delete && n.Immortal[a.Name] {
			return apierrors.NewForbidden(namespacesGR, a.Name, fmt.Errorf("this namespace may not be deleted"))
		}
		return nil
	}
	if a.Operation != Create || a.Namespace == "" || a.Subresource != "" || a.Resource.Group == "authorization.k8s.io" {
		return nil
	}
	phase, err := n.phase(ctx, a.Namespace)
	if err != nil {
		return err
	}
	// Events may still be recorded while a namespace terminates, as upstream allows.
	if phase == corev1.NamespaceTerminating && !(a.Resource.Group == "" && a.Resource.Resource == "events") {
		return apierrors.NewForbidden(schema.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}, a.Name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	}
	return nil
}

// nsInfo is what admission needs of a namespace.
type nsInfo struct {
	phase  corev1.NamespacePhase
	labels map[string]string
}

func infoOf(ns *corev1.Namespace) nsInfo {
	phase := ns.Status.Phase
	if ns.DeletionTimestamp != nil {
		phase = corev1.NamespaceTerminating
	}
	return nsInfo{phase: phase, labels: ns.Labels}
}

func (n *NamespaceLifecycle) info(ctx context.Context, name string) (nsInfo, error) {
	n.mu.RLock()
	info, ok := n.namespaces[name]
	n.mu.RUnlock()
	if ok {
		return info, nil
	}
	ns, err := n.Lookup(ctx, name)
	if err != nil {
		return nsInfo{}, apierrors.NewNotFound(namespacesGR, name)
	}
	return infoOf(ns), nil
}

func (n *NamespaceLifecycle) phase(ctx context.Context, name string) (corev1.NamespacePhase, error) {
	info, err := n.info(ctx, name)
	return info.phase, err
}

// Labels returns a namespace's labels (PodSecurity reads its level there).
func (n *NamespaceLifecycle) Labels(ctx context.Context, name string) (map[string]string, error) {
	info, err := n.info(ctx, name)
	return info.labels, err
}
