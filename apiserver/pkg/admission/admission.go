// Package admission is the API server's admission chain: plugins that see
// every write after it is decoded and defaulted, in upstream's order.
// Mutating plugins (Admit) may change the object; validating plugins
// (Validate) may only refuse it. A refusal is the Status the plugin
// returns (403 Forbidden for policy, 404 for a missing namespace, 422 for an
// invalid result).
package admission

import (
	"context"

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
)

// Attributes describe one write.
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
