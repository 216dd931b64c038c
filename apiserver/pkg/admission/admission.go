// Package admission is the API server's admission chain: plugins that see
// every write after it is decoded and defaulted, in upstream's order.
// Mutating plugins (Admit) may change the object; validating plugins
// (Validate) may only refuse it. A refusal is the Status the plugin
// returns (403 Forbidden for policy, 404 for a missing namespace, 422 for an
// invalid result).
//
// Plugins read stored objects through Objects (the server's stores). A plugin
// that changes stored state while admitting (ResourceQuota charging
// status.used) registers an undo with Attributes.OnFailure, which the store
// runs when the write fails afterwards, and hears about deleted objects
// through DeleteObserver.
package admission

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/apiserver/pkg/authn"
)

// Operation is what a request does.
type Operation string

const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
	// Connect is exec, attach, port-forward and proxy: the object is the
	// request's options (PodExecOptions, ...), as upstream's.
	Connect Operation = "CONNECT"
)

// Attributes describe one write, or one CONNECT request.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Kind        schema.GroupVersionKind
	Subresource string
	Namespace   string
	Name        string
	// Object is the new object (nil on delete); OldObject the stored one.
	Object, OldObject runtime.Object
	User              *authn.User
	DryRun            bool
	// Patched is set when a mutating webhook's patch replaced Object: the
	// store defaults it again, as upstream defaults a patched object when it
	// decodes it. What the built-in plugins add is complete as they add it.
	Patched bool

	rollbacks []func()
	// lists are the collections read for this write (listOnce); the first
	// is kept in place, without an allocation.
	firstList requestList
	lists     []requestList
}

// requestList is one collection read for a write.
type requestList struct {
	read                       bool
	group, resource, namespace string
	items                      []runtime.Object
}

// listOnce lists a collection through objs once per write: a plugin that
// needs it in Admit and again in Validate (LimitRanger) makes one watch
// cache read and sees the same objects in both. A failed read is not kept.
func (a *Attributes) listOnce(ctx context.Context, objs Objects, group, resource, namespace string) ([]runtime.Object, error) {
	if a.firstList.is(group, resource, namespace) {
		return a.firstList.items, nil
	}
	for _, l := range a.lists {
		if l.is(group, resource, namespace) {
			return l.items, nil
		}
	}
	items, err := objs.List(ctx, group, resource, namespace)
	if err != nil {
		return nil, err
	}
	l := requestList{read: true, group: group, resource: resource, namespace: namespace, items: items}
	if !a.firstList.read {
		a.firstList = l
	} else {
		a.lists = append(a.lists, l)
	}
	return items, nil
}

func (l *requestList) is(group, resource, namespace string) bool {
	return l.read && l.group == group && l.resource == resource && l.namespace == namespace
}

// MutationInterface changes objects.
type MutationInterface interface {
	Admit(ctx context.Context, a *Attributes) error
}

// ValidationInterface accepts or refuses objects.
type ValidationInterface interface {
	Validate(ctx context.Context, a *Attributes) error
}

// Plugin has a name and one or both interfaces.
type Plugin interface {
	Name() string
}

// Chain runs plugins in order: every mutation first, then every validation.
type Chain []Plugin

// Compiled is a Chain with its mutating, validating and delete-observing
// plugins picked out once, so that a request does not ask every plugin which
// interfaces it has (an interface type assertion per plugin, twice per
// write).
type Compiled struct {
	mutating   []MutationInterface
	validating []ValidationInterface
	observing  []DeleteObserver
}

// Compile picks out c's plugins by interface, in c's order.
func (c Chain) Compile() *Compiled {
	out := &Compiled{}
	for _, p := range c {
		if m, ok := p.(MutationInterface); ok {
			out.mutating = append(out.mutating, m)
		}
		if v, ok := p.(ValidationInterface); ok {
			out.validating = append(out.validating, v)
		}
		if d, ok := p.(DeleteObserver); ok {
			out.observing = append(out.observing, d)
		}
	}
	return out
}

// Admit runs the mutating plugins.
func (c *Compiled) Admit(ctx context.Context, a *Attributes) error {
	for _, m := range c.mutating {
		if err := m.Admit(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Validate runs the validating plugins.
func (c *Compiled) Validate(ctx context.Context, a *Attributes) error {
	for _, v := range c.validating {
		if err := v.Validate(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Deleted tells every DeleteObserver that a.OldObject is gone.
func (c *Compiled) Deleted(ctx context.Context, a *Attributes) {
	for _, d := range c.observing {
		d.Deleted(ctx, a)
	}
}

// Admit runs the mutating plugins.
func (c Chain) Admit(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if m, ok := p.(MutationInterface); ok {
			if err := m.Admit(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Validate runs the validating plugins.
func (c Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		if v, ok := p.(ValidationInterface); ok {
			if err := v.Validate(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// OnFailure registers fn to undo what a plugin did (a quota charge) when the
// write this admission was for fails after all. The store calls Rollback.
func (a *Attributes) OnFailure(fn func()) {
	a.rollbacks = append(a.rollbacks, fn)
}

// Rollback runs, once and in reverse order, what OnFailure registered.
func (a *Attributes) Rollback() {
	for i := len(a.rollbacks) - 1; i >= 0; i-- {
		a.rollbacks[i]()
	}
	a.rollbacks = nil
}

// DeleteObserver is told about an object after it is gone from storage
// (the quota plugin releases what the object was charged).
type DeleteObserver interface {
	Deleted(ctx context.Context, a *Attributes)
}

// Deleted tells every DeleteObserver in the chain that a.OldObject is gone.
func (c Chain) Deleted(ctx context.Context, a *Attributes) {
	for _, p := range c {
		if d, ok := p.(DeleteObserver); ok {
			d.Deleted(ctx, a)
		}
	}
}

// Objects reads stored objects for plugins. Get answers an error for which
// apierrors.IsNotFound is true when the object does not exist. What List
// and Get return may be the watch cache's own objects: plugins must not
// modify them.
type Objects interface {
	Get(ctx context.Context, group, resource, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, group, resource, namespace string) ([]runtime.Object, error)
}

// forbidden is upstream's admission.NewForbidden: a 403 naming the object.
func forbidden(a *Attributes, err error) error {
	return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
}

// isCreateOf reports whether a creates the main resource group/resource.
func isCreateOf(a *Attributes, group, resource string) bool {
	return a.Operation == Create && a.Subresource == "" && a.Resource.Group == group && a.Resource.Resource == resource
}
