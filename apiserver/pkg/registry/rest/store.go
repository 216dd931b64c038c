package rest

import (
	"context"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/serviceaccount"
	"skiff.dev/apiserver/pkg/storage"
)

// UpdateFunc computes the object the client wants from the current one.
// exists is false when the object is missing (PUT may create it).
type UpdateFunc func(ctx context.Context, current runtime.Object, exists bool) (runtime.Object, error)

// ObjectStore is the part of a resource's store a kind's subresources use
// (the generic store implements it).
type ObjectStore interface {
	Getter
	List(ctx context.Context, ns string, opts storage.ListOptions) (runtime.Object, error)
	// Update applies fn in a compare-and-swap loop with strategy.
	Update(ctx context.Context, ns, name string, fn UpdateFunc, strategy Strategy, dryRun bool) (runtime.Object, bool, error)
	Delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions, dryRun bool) (runtime.Object, bool, error)
	// GuaranteedUpdate applies fn to the stored object in a
	// compare-and-swap loop under pre (nil: none), with no strategy,
	// validation or admission.
	GuaranteedUpdate(ctx context.Context, ns, name string, pre *storage.Preconditions, fn storage.UpdateFunc) (runtime.Object, error)
	// DeleteStored removes the stored object under pre, with no
	// finalizers, grace period or admission.
	DeleteStored(ctx context.Context, ns, name string, pre *storage.Preconditions) (runtime.Object, error)
	// Time is the store's clock: the time now.
	Time() time.Time
}

// BindFunc binds the object named (pods/binding: a pod to a node).
type BindFunc func(ctx context.Context, s ObjectStore, ns, name string, b *corev1.Binding, dryRun bool) error

// FinalizeFunc writes the finalizers of the object named from obj
// (namespaces/finalize), deleting it when it is going and none is left;
// it returns what the client is answered.
type FinalizeFunc func(ctx context.Context, s ObjectStore, name string, obj runtime.Object, dryRun bool) (runtime.Object, error)

// EvictionDeps are what evicting an object may use: the storage of its
// kind and of PodDisruptionBudgets (nil when they are not served).
type EvictionDeps struct {
	Pods    ObjectStore
	Budgets ObjectStore
}

// EvictFunc evicts the object named (pods/eviction): it is deleted with
// opts unless that would violate its disruption budget.
type EvictFunc func(ctx context.Context, deps EvictionDeps, ns, name string, opts *metav1.DeleteOptions, dryRun bool) error

// TokenDeps are what issuing a service account's token may use: the
// storage of service accounts, pods, secrets and nodes (nil when not
// served), and the server's token issuer.
type TokenDeps struct {
	ServiceAccounts, Pods, Secrets, Nodes Getter
	Issuer                                *serviceaccount.Issuer
}

// TokenRequestFunc answers a TokenRequest for the service account named
// (serviceaccounts/token).
type TokenRequestFunc func(ctx context.Context, deps TokenDeps, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
