package registry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
	"skiff.dev/component-base/tracing"
)

// CreateHook runs before an object is written, e.g. to allocate a Service
// IP; rollback undoes it when the write fails.
type CreateHook interface {
	BeforeCreate(ctx context.Context, obj runtime.Object) (rollback func(), err error)
}

// UpdateHook runs inside the compare-and-swap loop before the write.
type UpdateHook interface {
	BeforeUpdate(ctx context.Context, obj, old runtime.Object) (rollback func(), err error)
}

// UpdateCommitHook runs after an update is stored, with the object it
// replaced, e.g. to release the node ports a Service no longer has.
type UpdateCommitHook interface {
	AfterUpdate(ctx context.Context, obj, old runtime.Object)
}

// DryRunHook is told of dry-run creates and updates, which run no
// CreateHook or UpdateHook: it fills in what they would allocate, refusing
// what they would refuse, and keeps nothing.
type DryRunHook interface {
	DryRunCreate(ctx context.Context, obj runtime.Object) error
	DryRunUpdate(ctx context.Context, obj, old runtime.Object) error
}

// DeleteHook runs after an object is gone, e.g. to release a Service IP.
type DeleteHook interface {
	AfterDelete(ctx context.Context, obj runtime.Object)
}

// Admission is the chain every write passes (package admission).
type Admission interface {
	Admit(ctx context.Context, a *admission.Attributes) error
	Validate(ctx context.Context, a *admission.Attributes) error
}

// Store is the generic REST store of one resource.
type Store struct {
	R       *Resource
	Storage storage.Interface
	// Admission, when set, sees every create, update and delete.
	Admission Admission
	// Hooks is an optional CreateHook / UpdateHook / DeleteHook.
	Hooks any
	// Created, when set, is told the namespace of each object Create has
	// stored ("" for a cluster-scoped one), before the client hears of it.
	Created func(namespace string)
	Now     func() time.Time
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// KeyRoot is /registry/<prefix>.
func (s *Store) KeyRoot() string { return "/registry/" + s.R.EtcdPrefix }

// Key of one object.
func (s *Store) Key(ns, name string) string {
	if s.R.Namespaced {
		return s.KeyRoot() + "/" + ns + "/" + name
	}
	return s.KeyRoot() + "/" + name
}

// Prefix of a collection: one namespace, or all.
func (s *Store) Prefix(ns string) string {
	if s.R.Namespaced && ns != "" {
		return s.KeyRoot() + "/" + ns + "/"
	}
	return s.KeyRoot() + "/"
}

// AttrFunc returns the resource's label and field attributes.
func (s *Store) AttrFunc() storage.AttrFunc { return attrFunc(s.R.Namespaced, s.R.Fields) }

// generateName appends upstream's 5-character random suffix.
func generateName(base string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	const maxGeneratedNameLength = 63 - 5
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return base + string(b)
}

// Default applies the resource's defaults: upstream's for built-in kinds,
// the resource's own (a custom resource's schema) when it has them.
func (s *Store) Default(obj runtime.Object) { s.defaultObject(obj) }

func (s *Store) defaultObject(obj runtime.Object) {
	if s.R.Default != nil {
		s.R.Default(obj)
	}
}

// defaultPatched defaults obj again when a mutating webhook's patch replaced
// it (a sidecar's container gets its defaults), as upstream defaults the
// patched object it decodes; what the built-in plugins add needs none.
func (s *Store) defaultPatched(obj runtime.Object, attrs *admission.Attributes) {
	if attrs != nil && attrs.Patched {
		s.defaultObject(obj)
	}
}

// Create stores a new object in namespace ns.
func (s *Store) Create(ctx context.Context, ns string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	out, _, err := s.create(ctx, ns, obj, dryRun, false)
	return out, err
}

// CreateHandedOver stores a new object as Create does, for a caller that
// hands obj over: once it returns, the caller only reads the object
// returned (the API handler, which answers with it). The watch cache may
// then keep that object (storage.HandOverCreator), and written is the
// bytes stored, without a resourceVersion, when they are the returned
// object's storage encoding (nil otherwise).
func (s *Store) CreateHandedOver(ctx context.Context, ns string, obj runtime.Object, dryRun bool) (out runtime.Object, written []byte, err error) {
	return s.create(ctx, ns, obj, dryRun, true)
}

func (s *Store) create(ctx context.Context, ns string, obj runtime.Object, dryRun, handOver bool) (runtime.Object, []byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if s.R.Namespaced {
		if m.GetNamespace() != "" && m.GetNamespace() != ns {
			return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		m.SetNamespace(ns)
	} else {
		m.SetNamespace("")
	}
	if m.GetResourceVersion() != "" {
		return nil, nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	m.SetUID(types.UID(uuid.NewString()))
	m.SetCreationTimestamp(metav1.NewTime(s.now().Truncate(time.Second)))
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetGeneration(0)
	m.SetSelfLink("")
	s.defaultObject(obj)
	attrs := s.admissionAttributes(ctx, admission.Create, "", ns, m.GetName(), obj, nil, dryRun)
	if err := s.admit(ctx, attrs); err != nil {
		return nil, nil, err
	}
	s.defaultPatched(obj, attrs)
	s.R.Strategy.PrepareForCreate(ctx, obj)
	for attempt := 0; ; attempt++ {
		if generated {
			m.SetName(generateName(m.GetGenerateName()))
		}
		// Allocation (a Service's IP) comes before validation, as upstream's
		// BeginCreate, and is undone when anything after it fails.
		var rollback func()
		if h, ok := s.Hooks.(CreateHook); ok && !dryRun {
			rollback, err = h.BeforeCreate(ctx, obj)
			if err != nil {
				return nil, nil, err
			}
		} else if h, ok := s.Hooks.(DryRunHook); ok && dryRun {
			if err := h.DryRunCreate(ctx, obj); err != nil {
				return nil, nil, err
			}
		}
		if errs := s.validateCreate(ctx, obj); len(errs) > 0 {
			if rollback != nil {
				rollback()
			}
			return nil, nil, apierrors.NewInvalid(s.R.GroupVersionKind().GroupKind(), m.GetName(), errs)
		}
		attrs.Name = m.GetName()
		if err := s.validateAdmission(ctx, attrs); err != nil {
			attrs.Rollback()
			if rollback != nil {
				rollback()
			}
			return nil, nil, err
		}
		if dryRun {
			return obj, nil, nil
		}
		var out runtime.Object
		var written []byte
		if c, ok := s.Storage.(storage.HandOverCreator); ok && handOver {
			out, written, err = c.CreateHandedOver(ctx, s.Key(ns, m.GetName()), obj)
		} else {
			out, err = s.Storage.Create(ctx, s.Key(ns, m.GetName()), obj)
		}
		if err != nil {
			attrs.Rollback()
			if rollback != nil {
				rollback()
			}
			// Upstream retries a generated name that collided.
			if generated && errors.Is(err, storage.ErrAlreadyExists) && attempt < 7 {
				continue
			}
			return nil, nil, err
		}
		if s.Created != nil {
			s.Created(m.GetNamespace())
		}
		return out, written, nil
	}
}

func (s *Store) validateCreate(ctx context.Context, obj runtime.Object) field.ErrorList {
	m, _ := meta.Accessor(obj)
	if m.GetName() == "" {
		return field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")}
	}
	return s.R.Strategy.Validate(ctx, obj)
}

// Get reads one object.
func (s *Store) Get(ctx context.Context, ns, name string) (runtime.Object, error) {
	return s.Storage.Get(ctx, s.Key(ns, name))
}

// GetCached reads an object from the watch cache as it is (the cache's
// own object, not to be modified), and from etcd when the cache does not
// have it, as upstream's admission plugins read their listers and fall back
// to a live lookup.
func (s *Store) GetCached(ctx context.Context, ns, name string) (runtime.Object, error) {
	key := s.Key(ns, name)
	if c, ok := s.Storage.(interface {
		GetCached(key string) (runtime.Object, bool)
	}); ok {
		if obj, found := c.GetCached(key); found {
			return obj, nil
		}
	}
	return s.Storage.Get(ctx, key)
}

// List reads a collection.
func (s *Store) List(ctx context.Context, ns string, opts storage.ListOptions) (runtime.Object, error) {
	list := s.R.NewList()
	opts.Recursive = true
	opts.Predicate.GetAttrs = s.AttrFunc()
	if err := s.Storage.GetList(ctx, s.Prefix(ns), opts, list); err != nil {
		return nil, err
	}
	return list, nil
}

// CachedObjects lists a collection (of namespace ns, or all for "") from
// the watch cache as it is (resourceVersion=0), returning the cache's own
// objects, which the caller must not modify; ok is false when the storage
// is not a watch cache or cannot answer.
func (s *Store) CachedObjects(ctx context.Context, ns string) (objs []runtime.Object, ok bool, err error) {
	c, ok := s.Storage.(interface {
		Objects(ctx context.Context, key string) ([]runtime.Object, bool, error)
	})
	if !ok {
		return nil, false, nil
	}
	return c.Objects(ctx, s.Prefix(ns))
}

// EncodedList lists a collection from the watch cache as the JSON
// encodings of its items, made once per object version (the cacher's
// EncodedList); ok is false when the storage cannot list that way.
func (s *Store) EncodedList(ctx context.Context, ns string, opts storage.ListOptions, encode func(runtime.Object) ([]byte, error)) (items [][]byte, rev int64, ok bool, err error) {
	c, ok := s.Storage.(interface {
		EncodedList(ctx context.Context, key string, opts storage.ListOptions, encode func(runtime.Object) ([]byte, error)) ([][]byte, int64, bool, error)
	})
	if !ok {
		return nil, 0, false, nil
	}
	opts.Recursive = true
	opts.Predicate.GetAttrs = s.AttrFunc()
	return c.EncodedList(ctx, s.Prefix(ns), opts, encode)
}

// Watch watches a collection (or, with a metadata.name selector, one object).
func (s *Store) Watch(ctx context.Context, ns string, opts storage.ListOptions) (watch.Interface, error) {
	opts.Recursive = true
	opts.Predicate.GetAttrs = s.AttrFunc()
	return s.Storage.Watch(ctx, s.Prefix(ns), opts)
}

var _ rest.ObjectStore = (*Store)(nil)

// GuaranteedUpdate applies fn to the stored object in a compare-and-swap
// loop under pre, with no strategy, validation or admission (a
// PodDisruptionBudget's disruptions taken by an eviction, a pod's binding).
func (s *Store) GuaranteedUpdate(ctx context.Context, ns, name string, pre *storage.Preconditions, fn storage.UpdateFunc) (runtime.Object, error) {
	return s.Storage.GuaranteedUpdate(ctx, s.Key(ns, name), pre, false, fn)
}

// DeleteStored removes the stored object under pre, with no finalizers,
// grace period or admission (a finalized namespace).
func (s *Store) DeleteStored(ctx context.Context, ns, name string, pre *storage.Preconditions) (runtime.Object, error) {
	return s.Storage.Delete(ctx, s.Key(ns, name), pre, nil)
}

// Time is the store's clock: Now when set, else the time now.
func (s *Store) Time() time.Time { return s.now() }

// Update applies fn inside a compare-and-swap loop, with the strategy of the
// endpoint (main or status). It reports whether the object was created.
func (s *Store) Update(ctx context.Context, ns, name string, fn rest.UpdateFunc, strategy rest.Strategy, dryRun bool) (runtime.Object, bool, error) {
	return s.update(ctx, ns, name, fn, strategy, dryRun, strategy.AllowCreateOnUpdate())
}

// Apply is Update for a server-side apply, which creates a missing object
// whatever the strategy says of creating on update, as upstream's.
func (s *Store) Apply(ctx context.Context, ns, name string, fn rest.UpdateFunc, strategy rest.Strategy, dryRun bool) (runtime.Object, bool, error) {
	return s.update(ctx, ns, name, fn, strategy, dryRun, true)
}

func (s *Store) update(ctx context.Context, ns, name string, fn rest.UpdateFunc, strategy rest.Strategy, dryRun, allowCreate bool) (runtime.Object, bool, error) {
	key := s.Key(ns, name)
	created := false
	var rollbacks []func()
	// replaced is the object the last attempt updated.
	var replaced runtime.Object
	tryUpdate := func(existing runtime.Object) (runtime.Object, error) {
		for _, r := range rollbacks {
			r()
		}
		rollbacks = nil
		replaced = existing
		em, err := meta.Accessor(existing)
		if err != nil {
			return nil, err
		}
		exists := em.GetResourceVersion() != ""
		obj, err := fn(ctx, existing, exists)
		if err != nil {
			return nil, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if err := s.checkNameAndNamespace(m, ns, name); err != nil {
			return nil, err
		}
		if !exists {
			if !allowCreate {
				return nil, fmt.Errorf("%w: key %s", storage.ErrNotFound, key)
			}
			created = true
			m.SetResourceVersion("")
			m.SetUID(types.UID(uuid.NewString()))
			m.SetCreationTimestamp(metav1.NewTime(s.now().Truncate(time.Second)))
			s.defaultObject(obj)
			attrs := s.admissionAttributes(ctx, admission.Create, subresourceOf(s, strategy), ns, name, obj, nil, dryRun)
			if err := s.admit(ctx, attrs); err != nil {
				return nil, err
			}
			s.defaultPatched(obj, attrs)
			strategy.PrepareForCreate(ctx, obj)
			if errs := s.validateCreate(ctx, obj); len(errs) > 0 {
				return nil, apierrors.NewInvalid(s.R.GroupVersionKind().GroupKind(), name, errs)
			}
			if err := s.validateAdmission(ctx, attrs); err != nil {
				attrs.Rollback()
				return nil, err
			}
			rollbacks = append(rollbacks, attrs.Rollback)
			if h, ok := s.Hooks.(CreateHook); ok && !dryRun {
				rb, err := h.BeforeCreate(ctx, obj)
				if err != nil {
					return nil, err
				}
				rollbacks = append(rollbacks, rb)
			} else if h, ok := s.Hooks.(DryRunHook); ok && dryRun {
				// As a dry-run create does.
				if err := h.DryRunCreate(ctx, obj); err != nil {
					return nil, err
				}
			}
			return obj, nil
		}
		created = false
		rv := m.GetResourceVersion()
		if rv == "" {
			if !strategy.AllowUnconditionalUpdate() {
				// Upstream's words: the resource in the kind's place, the
				// version as the number it parsed.
				return nil, apierrors.NewInvalid(schema.GroupKind{Group: s.R.Group, Kind: s.R.Resource}, name, field.ErrorList{
					field.Invalid(field.NewPath("metadata", "resourceVersion"), uint64(0), "must be specified for an update")})
			}
			// An unconditional update writes over the latest version, as
			// if the client had named it (validation wants one).
			m.SetResourceVersion(em.GetResourceVersion())
		} else if rv != em.GetResourceVersion() {
			return nil, fmt.Errorf("%w: the object has been modified; please apply your changes to the latest version and try again", storage.ErrConflict)
		}
		// System fields an update cannot change (upstream's BeforeUpdate).
		m.SetGeneration(em.GetGeneration())
		if m.GetUID() == "" {
			m.SetUID(em.GetUID())
		}
		m.SetCreationTimestamp(em.GetCreationTimestamp())
		if em.GetDeletionTimestamp() != nil {
			m.SetDeletionTimestamp(em.GetDeletionTimestamp())
		} else {
			m.SetDeletionTimestamp(nil)
		}
		if em.GetDeletionGracePeriodSeconds() != nil {
			m.SetDeletionGracePeriodSeconds(em.GetDeletionGracePeriodSeconds())
		} else {
			m.SetDeletionGracePeriodSeconds(nil)
		}
		// An object being deleted takes no new finalizers.
		if em.GetDeletionTimestamp() != nil {
			old := map[string]bool{}
			for _, f := range em.GetFinalizers() {
				old[f] = true
			}
			for _, f := range m.GetFinalizers() {
				if !old[f] {
					return nil, apierrors.NewInvalid(s.R.GroupVersionKind().GroupKind(), name, field.ErrorList{
						field.Forbidden(field.NewPath("metadata", "finalizers"), fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %q", f))})
				}
			}
		}
		s.defaultObject(obj)
		attrs := s.admissionAttributes(ctx, admission.Update, subresourceOf(s, strategy), ns, name, obj, existing, dryRun)
		if err := s.admit(ctx, attrs); err != nil {
			return nil, err
		}
		s.defaultPatched(obj, attrs)
		strategy.PrepareForUpdate(ctx, obj, existing)
		// Allocations are kept or made before validation, as on create.
		if h, ok := s.Hooks.(UpdateHook); ok && !dryRun {
			rb, err := h.BeforeUpdate(ctx, obj, existing)
			if err != nil {
				return nil, err
			}
			rollbacks = append(rollbacks, rb)
		} else if h, ok := s.Hooks.(DryRunHook); ok && dryRun {
			if err := h.DryRunUpdate(ctx, obj, existing); err != nil {
				return nil, err
			}
		}
		var errs field.ErrorList
		if m.GetUID() != em.GetUID() {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "uid"), m.GetUID(), "field is immutable"))
		}
		// Upstream's validateCommonFields: the whole metadata, on every update.
		errs = append(errs, apivalidation.ValidateObjectMetaAccessor(m, s.R.Namespaced, path.ValidatePathSegmentName, field.NewPath("metadata"))...)
		errs = dedupe(append(errs, strategy.ValidateUpdate(ctx, obj, existing)...))
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(s.R.GroupVersionKind().GroupKind(), name, errs)
		}
		if err := s.validateAdmission(ctx, attrs); err != nil {
			attrs.Rollback()
			return nil, err
		}
		rollbacks = append(rollbacks, attrs.Rollback)
		// Keep the resourceVersion the storage compares against.
		m.SetResourceVersion(em.GetResourceVersion())
		return obj, nil
	}
	if dryRun {
		existing, err := s.Storage.Get(ctx, key)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, false, err
		}
		if existing == nil {
			existing = s.R.New()
		}
		out, err := tryUpdate(existing)
		return out, created, err
	}
	out, err := s.Storage.GuaranteedUpdate(ctx, key, nil, allowCreate, func(existing runtime.Object) (runtime.Object, error) {
		obj, err := tryUpdate(existing)
		if err != nil {
			return nil, err
		}
		if created {
			// Storage writes creations without a resourceVersion.
			m, _ := meta.Accessor(obj)
			m.SetResourceVersion("")
		}
		return obj, nil
	})
	if err != nil {
		for _, r := range rollbacks {
			r()
		}
		return nil, false, err
	}
	if h, ok := s.Hooks.(UpdateCommitHook); ok && !created && replaced != nil {
		h.AfterUpdate(ctx, out, replaced)
	}
	// An update that removed the last finalizer of an object being deleted
	// completes the deletion.
	if m, err := meta.Accessor(out); err == nil && m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0 &&
		(m.GetDeletionGracePeriodSeconds() == nil || *m.GetDeletionGracePeriodSeconds() == 0) &&
		(s.R.Finalizing == nil || !s.R.Finalizing(out)) && !dryRun {
		uid, rv := m.GetUID(), m.GetResourceVersion()
		deleted, err := s.Storage.Delete(ctx, key, &storage.Preconditions{UID: &uid, ResourceVersion: &rv}, nil)
		if err == nil {
			s.afterDelete(ctx, deleted)
			return deleted, false, nil
		}
		if !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
			return nil, false, err
		}
	}
	return out, created, nil
}

func (s *Store) checkNameAndNamespace(m metav1.Object, ns, name string) error {
	if m.GetName() == "" {
		m.SetName(name)
	}
	if m.GetName() != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	if s.R.Namespaced {
		if m.GetNamespace() == "" {
			m.SetNamespace(ns)
		}
		if m.GetNamespace() != ns {
			return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		m.SetNamespace("")
	}
	return nil
}

func (s *Store) afterDelete(ctx context.Context, obj runtime.Object) {
	if h, ok := s.Hooks.(DeleteHook); ok {
		h.AfterDelete(ctx, obj)
	}
	if d, ok := s.Admission.(interface {
		Deleted(ctx context.Context, a *admission.Attributes)
	}); ok && obj != nil {
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		d.Deleted(ctx, s.admissionAttributes(ctx, admission.Delete, "", m.GetNamespace(), m.GetName(), nil, obj, false))
	}
}

// Delete deletes an object now, or marks it for deletion when a finalizer
// or a grace period (pods) must run first. deleted says which happened.
func (s *Store) Delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions, dryRun bool) (runtime.Object, bool, error) {
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	key := s.Key(ns, name)
	var pre *storage.Preconditions
	if opts.Preconditions != nil {
		pre = &storage.Preconditions{UID: opts.Preconditions.UID, ResourceVersion: opts.Preconditions.ResourceVersion}
	}
	current, err := s.Storage.Get(ctx, key)
	if err != nil {
		return nil, false, err
	}
	if err := pre.Check(key, current); err != nil {
		return nil, false, err
	}
	cm, err := meta.Accessor(current)
	if err != nil {
		return nil, false, err
	}
	if err := s.validateAdmission(ctx, s.admissionAttributes(ctx, admission.Delete, "", ns, name, nil, current, dryRun)); err != nil {
		return nil, false, err
	}

	grace := int64(0)
	if s.R.GracePeriod != nil {
		grace = s.R.GracePeriod(current, opts)
	}
	finalizers := deletionFinalizers(cm.GetFinalizers(), opts)
	marks := s.R.MarkDeleting != nil && cm.GetDeletionTimestamp() == nil
	pending := grace > 0 || len(finalizers) > 0 || marks || (s.R.Finalizing != nil && s.R.Finalizing(current))
	if dryRun {
		return current, !pending, nil
	}
	if !pending {
		uid := cm.GetUID()
		if pre == nil {
			pre = &storage.Preconditions{}
		}
		if pre.UID == nil {
			pre.UID = &uid
		}
		out, err := s.Storage.Delete(ctx, key, pre, nil)
		if err != nil {
			return nil, false, err
		}
		s.afterDelete(ctx, out)
		return out, true, nil
	}
	now := metav1.NewTime(s.now())
	out, err := s.Storage.GuaranteedUpdate(ctx, key, pre, false, func(existing runtime.Object) (runtime.Object, error) {
		obj := existing.DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		g := grace
		first := m.GetDeletionTimestamp() == nil
		if dt := m.GetDeletionTimestamp(); dt != nil {
			// Already being deleted: a grace period can only get shorter.
			if old := m.GetDeletionGracePeriodSeconds(); old != nil && *old <= g {
				g = *old
			} else {
				t := metav1.NewTime(now.Add(time.Duration(g) * time.Second))
				if t.Before(dt) {
					m.SetDeletionTimestamp(&t)
				}
			}
		} else {
			t := metav1.NewTime(now.Add(time.Duration(g) * time.Second).Truncate(time.Second))
			m.SetDeletionTimestamp(&t)
		}
		m.SetDeletionGracePeriodSeconds(&g)
		m.SetFinalizers(deletionFinalizers(m.GetFinalizers(), opts))
		if s.R.MarkDeleting != nil && first {
			s.R.MarkDeleting(obj)
		}
		if s.R.MarkTerminating != nil {
			s.R.MarkTerminating(obj)
		}
		return obj, nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// deletionFinalizers adds or removes the orphan and foregroundDeletion
// finalizers as the propagation policy asks (recorded for the garbage
// collector).
func deletionFinalizers(existing []string, opts *metav1.DeleteOptions) []string {
	policy := metav1.DeletePropagationBackground
	explicit := false
	if opts.PropagationPolicy != nil {
		policy, explicit = *opts.PropagationPolicy, true
	} else if opts.OrphanDependents != nil { //nolint:staticcheck // upstream still honours it
		explicit = true
		if *opts.OrphanDependents { //nolint:staticcheck
			policy = metav1.DeletePropagationOrphan
		}
	}
	out := make([]string, 0, len(existing)+1)
	for _, f := range existing {
		if explicit && (f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents) {
			continue
		}
		out = append(out, f)
	}
	switch {
	case explicit && policy == metav1.DeletePropagationOrphan:
		out = append(out, metav1.FinalizerOrphanDependents)
	case explicit && policy == metav1.DeletePropagationForeground:
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	return out
}

// IsNotFound reports whether err means the object does not exist.
func IsNotFound(err error) bool {
	return errors.Is(err, storage.ErrNotFound) || apierrors.IsNotFound(err)
}

func (s *Store) admissionAttributes(ctx context.Context, op admission.Operation, sub, ns, name string, obj, old runtime.Object, dryRun bool) *admission.Attributes {
	u, _ := authn.UserFrom(ctx)
	return &admission.Attributes{
		Operation: op, Resource: s.R.GroupVersion().WithResource(s.R.Resource), Kind: s.R.GroupVersionKind(),
		Subresource: sub, Namespace: ns, Name: name, Object: obj, OldObject: old, User: u, DryRun: dryRun,
	}
}

func (s *Store) admit(ctx context.Context, a *admission.Attributes) (err error) {
	if s.Admission == nil {
		return nil
	}
	ctx, span := tracing.Start(ctx, "Admit", attribute.String("operation", string(a.Operation)))
	defer func() { tracing.End(span, err) }()
	return s.Admission.Admit(ctx, a)
}

func (s *Store) validateAdmission(ctx context.Context, a *admission.Attributes) (err error) {
	if s.Admission == nil {
		return nil
	}
	ctx, span := tracing.Start(ctx, "Validate admission", attribute.String("operation", string(a.Operation)))
	defer func() { tracing.End(span, err) }()
	return s.Admission.Validate(ctx, a)
}

// subresourceOf names the subresource a strategy serves.
func subresourceOf(s *Store, strategy rest.Strategy) string {
	// The kinds' strategies (and custom resources') name theirs.
	if n, ok := strategy.(interface{ Subresource() string }); ok {
		return n.Subresource()
	}
	return ""
}

// dedupe drops errors reported twice (metadata is checked by both the
// common and the kind's update validation).
func dedupe(errs field.ErrorList) field.ErrorList {
	seen := map[string]bool{}
	out := errs[:0]
	for _, e := range errs {
		if k := e.Error(); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}
