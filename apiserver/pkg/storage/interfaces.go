package storage

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Sentinel errors. Wrap them with %w and a message a person can act on.
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
	ErrConflict      = errors.New("conflict")
	ErrGone          = errors.New("gone")
	ErrUnavailable   = errors.New("storage unavailable")
	ErrTimeout       = errors.New("storage timeout")
	ErrInvalid       = errors.New("invalid")
	// ErrTooLarge: the object is larger than the storage accepts.
	ErrTooLarge = errors.New("object too large for storage")
	// ErrTooLargeResourceVersion: the client asked for a revision the store has not reached.
	ErrTooLargeResourceVersion = errors.New("too large resource version")
)

// Preconditions must hold for an update or delete to go ahead.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}

// Check returns ErrConflict when obj does not satisfy the preconditions.
func (p *Preconditions) Check(key string, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	m, err := metaOf(obj)
	if err != nil {
		return err
	}
	if p.UID != nil && *p.UID != m.GetUID() {
		return fmt.Errorf("%w: precondition failed for %s: UID in precondition: %v, UID in object meta: %v", ErrConflict, key, *p.UID, m.GetUID())
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return fmt.Errorf("%w: precondition failed for %s: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", ErrConflict, key, *p.ResourceVersion, m.GetResourceVersion())
	}
	return nil
}

// AttrFunc returns the labels and the selectable fields of an object.
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// SelectionPredicate selects objects by labels and fields, with paging.
type SelectionPredicate struct {
	Label    labels.Selector
	Field    fields.Selector
	GetAttrs AttrFunc
	Limit    int64
	Continue string
}

// Empty reports whether the predicate selects everything.
func (p *SelectionPredicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// MatchesAttrs applies the selectors to precomputed attributes.
func (p *SelectionPredicate) MatchesAttrs(l labels.Set, f fields.Set) bool {
	if p.Label != nil && !p.Label.Empty() && !p.Label.Matches(l) {
		return false
	}
	if p.Field != nil && !p.Field.Empty() && !p.Field.Matches(f) {
		return false
	}
	return true
}

// Matches computes the attributes of obj and applies the selectors.
func (p *SelectionPredicate) Matches(obj runtime.Object) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	l, f, err := p.GetAttrs(obj)
	if err != nil {
		return false, err
	}
	return p.MatchesAttrs(l, f), nil
}

// ListOptions tell List and Watch what to read.
type ListOptions struct {
	// ResourceVersion as the client sent it ("" = most recent, consistent).
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	Predicate            SelectionPredicate
	// Recursive: the key is a prefix.
	Recursive bool
	// AllowWatchBookmarks asks for BOOKMARK events.
	AllowWatchBookmarks bool
	// SendInitialEvents asks a watch for the current state first, closed by a
	// bookmark annotated k8s.io/initial-events-end.
	SendInitialEvents *bool
	// FromStorage makes a list read etcd itself, past any cache: a
	// consistent read that never waits for a cache to catch up.
	FromStorage bool
}

// UpdateFunc computes the new object from the current one. It must not
// mutate existing; returning an error aborts the update.
type UpdateFunc func(existing runtime.Object) (runtime.Object, error)

// ValidateDeletion runs against the current object just before it is deleted.
type ValidateDeletion func(ctx context.Context, obj runtime.Object) error

// Interface is the generic store every resource uses.
// HandOverCreator is a storage that can take over the object of a create
// whose caller only reads it afterwards (the watch cache:
// cacher.Cacher.CreateHandedOver): out may be obj itself, kept by the
// storage, and written is the bytes stored, without a resourceVersion,
// when they are out's encoding (nil otherwise).
type HandOverCreator interface {
	CreateHandedOver(ctx context.Context, key string, obj runtime.Object) (out runtime.Object, written []byte, err error)
}

type Interface interface {
	Create(ctx context.Context, key string, obj runtime.Object) (runtime.Object, error)
	Get(ctx context.Context, key string) (runtime.Object, error)
	// GetList fills listObj (a *XList) with the objects under key.
	GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error
	// GuaranteedUpdate applies tryUpdate to the current object and writes the
	// result with compare-and-swap on the etcd revision, retrying on races.
	GuaranteedUpdate(ctx context.Context, key string, preconditions *Preconditions, ignoreNotFound bool, tryUpdate UpdateFunc) (runtime.Object, error)
	Delete(ctx context.Context, key string, preconditions *Preconditions, validate ValidateDeletion) (runtime.Object, error)
	Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)
	// CurrentRevision is the store-wide revision, read from etcd.
	CurrentRevision(ctx context.Context) (int64, error)
}
