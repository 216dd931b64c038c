package apiextensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
	"skiff.dev/apiserver/pkg/storefeed"
	"skiff.dev/apiserver/pkg/webhook"
)

// StorageFactory builds the storage of a custom resource's storage version
// (etcd behind a watch cache); run serves the cache until its context ends.
type StorageFactory func(r *registry.Resource) (st storage.Interface, run func(ctx context.Context) error)

// Controller is the in-server controller of CustomResourceDefinitions, as
// upstream's naming, establishing and finalizing controllers together: it
// accepts names (condition NamesAccepted), serves the resources of a CRD
// whose names are accepted and then marks it Established, and, once a CRD
// is deleted, deletes its instances, removes the cleanup finalizer and
// stops serving.
type Controller struct {
	// CRDs is the store of CustomResourceDefinitions.
	CRDs *registry.Store
	// Serve receives the stores of every custom resource served, in
	// discovery order, after each change.
	Serve func(stores []*registry.Store)
	// NewStorage builds a CRD's storage.
	NewStorage StorageFactory
	// Admission is the chain custom resources pass, as every kind.
	Admission registry.Admission
	// Webhooks reaches the conversion webhooks of CRDs that have one.
	Webhooks *webhook.Clients
	// RetryInterval paces the retries of a cleanup that waits for the
	// finalizers of instances; a second when zero.
	RetryInterval time.Duration
	// Synced, when set, is closed once the CRDs stored at start are served
	// (the server's readiness waits for it, as upstream's
	// crd-informer-synced).
	Synced chan struct{}
	// ListerWatcher, when set, is where the controller's informer lists
	// and watches CRDs instead of CRDs (tests count its calls).
	ListerWatcher cache.ListerWatcher

	serving map[string]*served
	queue   workqueue.TypedRateLimitingInterface[string]
	// crds is the informer's cache of CRDs, with the controller's own
	// status writes.
	crds cache.MutationCache
	// changed: what is served changed since the last publish.
	changed bool
}

// served is what serves one CRD.
type served struct {
	uid         types.UID
	signature   string
	stores      []*registry.Store
	terminating *atomic.Bool
	cancel      context.CancelFunc
	// stale: the watch cache could not convert an object to read its
	// selectable fields at a version; the stores are built again (and the
	// cache filled again) after staleRetry(rebuilds), as upstream's cache of
	// that version lists again after a failed conversion.
	stale    atomic.Bool
	rebuilds int
}

// staleRetry is how long after a failed conversion of its watch cache a
// CRD's stores are built again: doubling from a second with each rebuild
// for the same reason, up to a minute.
func staleRetry(rebuilds int) time.Duration {
	return min(time.Second<<min(rebuilds, 6), time.Minute)
}

// systemContext is the identity of the controller's own requests.
func systemContext(ctx context.Context) context.Context {
	return authn.WithUser(ctx, &authn.User{Name: "system:apiserver", Groups: []string{"system:masters"}})
}

// Run serves and reconciles CRDs until ctx ends. An informer lists the
// CRDs once and then watches them (client-go's reflector over the CRD
// store, resuming from the last resourceVersion); each change queues the
// name of the CRD it concerns, and a worker reconciles one CRD per key, as
// upstream's controllers do. The CRDs stored at start are reconciled, in
// creation order, before Synced closes.
func (c *Controller) Run(ctx context.Context) error {
	ctx = systemContext(ctx)
	logger := klog.FromContext(ctx).WithName("crd-controller")
	ctx = klog.NewContext(ctx, logger)
	c.serving = map[string]*served{}
	defer c.stopAll()
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "crd_controller"})
	defer c.queue.ShutDown()
	// The worker's wait for the next key ends with ctx.
	stop := context.AfterFunc(ctx, c.queue.ShutDown)
	defer stop()
	lw := c.ListerWatcher
	if lw == nil {
		lw = storefeed.ListWatch(ctx, c.CRDs, nil)
	}
	indexer, informer := cache.NewIndexerInformer(lw, &apiextensionsv1.CustomResourceDefinition{}, 0,
		cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.enqueue(obj) },
			UpdateFunc: func(_, obj any) { c.enqueue(obj) },
			DeleteFunc: func(obj any) {
				if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = gone.Obj
				}
				c.enqueue(obj)
				// Its names are free now for the others of its group.
				if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
					c.enqueueGroup(crd.Spec.Group, crd.Name)
				}
			},
		},
		cache.Indexers{groupIndex: func(obj any) ([]string, error) {
			return []string{obj.(*apiextensionsv1.CustomResourceDefinition).Spec.Group}, nil
		}})
	// The controller's own status writes are seen at once, before the
	// watch brings them, so that two CRDs cannot both take a name.
	c.crds = cache.NewIntegerResourceVersionMutationCache(indexer, indexer, time.Minute, false)
	go informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil
	}
	initial := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(indexer.ListKeys()))
	for _, obj := range indexer.List() {
		initial = append(initial, obj.(*apiextensionsv1.CustomResourceDefinition))
	}
	sort.SliceStable(initial, func(i, j int) bool {
		ti, tj := initial[i].CreationTimestamp, initial[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return initial[i].Name < initial[j].Name
	})
	for _, crd := range initial {
		c.handle(ctx, crd.Name)
	}
	c.publishIfChanged()
	if c.Synced != nil {
		select {
		case <-c.Synced:
		default:
			close(c.Synced)
		}
	}
	for c.processNext(ctx) {
	}
	return nil
}

// groupIndex indexes the CRDs by API group, whose names they share.
const groupIndex = "group"

func (c *Controller) retryInterval() time.Duration {
	if c.RetryInterval > 0 {
		return c.RetryInterval
	}
	return time.Second
}

func (c *Controller) enqueue(obj any) {
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		c.queue.Add(crd.Name)
	}
}

// enqueueGroup queues the CRDs of group but except, whose accepted names
// may change when except's do.
func (c *Controller) enqueueGroup(group, except string) {
	objs, err := c.crds.ByIndex(groupIndex, group)
	if err != nil {
		return
	}
	for _, obj := range objs {
		if crd := obj.(*apiextensionsv1.CustomResourceDefinition); crd.Name != except {
			c.queue.Add(crd.Name)
		}
	}
}

// processNext reconciles the next queued CRD; false once the queue is
// shut down.
func (c *Controller) processNext(ctx context.Context) bool {
	name, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(name)
	c.handle(ctx, name)
	c.publishIfChanged()
	return true
}

// handle reconciles one CRD and queues it again as its outcome needs: at
// the retry interval while a cleanup waits for the finalizers of its
// instances, with the rate limiter's backoff after an error.
func (c *Controller) handle(ctx context.Context, name string) {
	pending, err := c.sync(ctx, name)
	switch {
	case err != nil:
		klog.FromContext(ctx).Error(err, "reconciling a CustomResourceDefinition", "crd", name)
		c.queue.AddRateLimited(name)
	case pending:
		c.queue.Forget(name)
		c.queue.AddAfter(name, c.retryInterval())
	default:
		c.queue.Forget(name)
	}
}

// sync brings one CRD's status and serving up to date; it reports whether
// a cleanup is pending.
func (c *Controller) sync(ctx context.Context, name string) (bool, error) {
	logger := klog.FromContext(ctx)
	obj, exists, err := c.crds.GetByKey(name)
	if err != nil {
		return false, err
	}
	if !exists {
		if s := c.serving[name]; s != nil {
			s.cancel()
			delete(c.serving, name)
			c.changed = true
		}
		return false, nil
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	group, err := c.crds.ByIndex(groupIndex, crd.Spec.Group)
	if err != nil {
		return false, err
	}
	others := make([]apiextensionsv1.CustomResourceDefinition, 0, len(group))
	for _, o := range group {
		others = append(others, *o.(*apiextensionsv1.CustomResourceDefinition))
	}
	desired := desiredStatus(crd, others)
	var errs []error
	if IsEstablished(desired) {
		ch, err := c.ensureServed(ctx, desired)
		if err != nil {
			errs = append(errs, fmt.Errorf("serving: %w", err))
		}
		c.changed = c.changed || ch
	}
	if !equality.Semantic.DeepEqual(desired.Status, crd.Status) {
		written, err := c.writeStatus(ctx, desired)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			errs = append(errs, fmt.Errorf("updating the status: %w", err))
		}
		if written != nil {
			c.crds.Mutation(written)
			// Names it took or gave up are decided again for its group.
			c.enqueueGroup(crd.Spec.Group, crd.Name)
		}
	}
	pending := false
	if desired.DeletionTimestamp != nil && hasFinalizer(desired, CleanupFinalizer) {
		if err := c.cleanup(ctx, desired); err != nil {
			pending = true
			logger.V(2).Info("cleaning up a CustomResourceDefinition", "crd", name, "err", err)
		}
	}
	return pending, errors.Join(errs...)
}

// desiredStatus computes NamesAccepted, Established and acceptedNames of
// crd against the names other CRDs of its group hold.
func desiredStatus(crd *apiextensionsv1.CustomResourceDefinition, all []apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	out := crd.DeepCopy()
	names := crd.Spec.Names
	reason, msg := namesConflict(crd, all)
	if reason != "" {
		setCondition(out, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionFalse, Reason: reason, Message: msg,
		})
		if !IsEstablished(out) {
			setCondition(out, apiextensionsv1.CustomResourceDefinitionCondition{
				Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Reason: "NotAccepted", Message: "not all names are accepted",
			})
		}
		return out
	}
	out.Status.AcceptedNames = names
	setCondition(out, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found",
	})
	if !IsEstablished(out) {
		setCondition(out, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
		})
	}
	return out
}

// namesConflict reports the first of crd's names that another CRD of the
// same group has accepted, with upstream's reasons.
func namesConflict(crd *apiextensionsv1.CustomResourceDefinition, all []apiextensionsv1.CustomResourceDefinition) (string, string) {
	n := crd.Spec.Names
	for i := range all {
		other := &all[i]
		if other.Name == crd.Name || other.Spec.Group != crd.Spec.Group {
			continue
		}
		a := other.Status.AcceptedNames
		used := map[string]bool{a.Plural: true, a.Singular: true}
		for _, s := range a.ShortNames {
			used[s] = true
		}
		switch {
		case used[n.Plural]:
			return "PluralConflict", fmt.Sprintf("%q is already in use", n.Plural)
		case n.Singular != "" && used[n.Singular]:
			return "SingularConflict", fmt.Sprintf("%q is already in use", n.Singular)
		case n.Kind == a.Kind || n.Kind == a.ListKind:
			return "KindConflict", fmt.Sprintf("%q is already in use", n.Kind)
		case n.ListKind == a.Kind || n.ListKind == a.ListKind:
			return "ListKindConflict", fmt.Sprintf("%q is already in use", n.ListKind)
		}
		for _, s := range n.ShortNames {
			if used[s] {
				return "ShortNamesConflict", fmt.Sprintf("%q is already in use", s)
			}
		}
	}
	return "", ""
}

// signature identifies what serving a CRD depends on: a change rebuilds it.
func signature(crd *apiextensionsv1.CustomResourceDefinition) string {
	b, _ := json.Marshal(struct {
		UID   types.UID
		Spec  apiextensionsv1.CustomResourceDefinitionSpec
		Names apiextensionsv1.CustomResourceDefinitionNames
	}{crd.UID, crd.Spec, crd.Status.AcceptedNames})
	return string(b)
}

// ensureServed builds (or rebuilds after a change) the stores of crd's
// served versions; it reports whether anything changed.
func (c *Controller) ensureServed(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (bool, error) {
	sig := signature(crd)
	cur := c.serving[crd.Name]
	rebuilds := 0
	if cur != nil && cur.signature == sig {
		if !cur.stale.Load() {
			cur.terminating.Store(crd.DeletionTimestamp != nil)
			return false, nil
		}
		rebuilds = cur.rebuilds + 1
	}
	next, err := c.build(ctx, crd, sig, rebuilds)
	if err != nil {
		return false, err
	}
	if cur != nil {
		cur.cancel()
	}
	c.serving[crd.Name] = next
	return true, nil
}

func (c *Controller) build(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, sig string, rebuilds int) (*served, error) {
	terminating := &atomic.Bool{}
	terminating.Store(crd.DeletionTimestamp != nil)
	sv := storageVersion(crd)
	var storageRow *registry.Resource
	type version struct {
		r   *registry.Resource
		sch *Schema
	}
	var views []version
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served && v.Name != sv {
			continue
		}
		r, sch, err := customResource(crd, v, terminating.Load)
		if err != nil {
			return nil, err
		}
		if v.Name == sv {
			storageRow = r
		}
		if v.Served {
			views = append(views, version{r, sch})
		}
	}
	if storageRow == nil {
		return nil, fmt.Errorf("no storage version")
	}
	order := map[string]int{}
	for i, v := range servedVersions(crd) {
		order[v.Name] = i
	}
	sort.SliceStable(views, func(i, j int) bool { return order[views[i].r.Version] < order[views[j].r.Version] })
	conv := newConverter(crd, c.Webhooks)
	// The storage's objects carry the selectable fields of every version
	// that has some, each read at its version.
	vfs := make([]versionFields, len(views))
	var selectable []versionFields
	for i, v := range views {
		vfs[i] = versionFields{v.r.GroupVersion(), v.sch, v.r.Fields}
		if v.r.Fields != nil {
			selectable = append(selectable, vfs[i])
		}
	}
	s := &served{uid: crd.UID, signature: sig, terminating: terminating, rebuilds: rebuilds}
	stored := *storageRow
	stored.Fields = storedFields(selectable, conv, func() {
		if s.stale.CompareAndSwap(false, true) && c.queue != nil {
			c.queue.AddAfter(crd.Name, staleRetry(rebuilds))
		}
	})
	inner, run := c.NewStorage(&stored)
	storageGV := storageRow.GroupVersion()
	for i, v := range views {
		view := registry.NewSharedStorage(inner, versionView(vfs[i], storageGV, v.r.ListKindName(), v.r.Namespaced, conv))
		s.stores = append(s.stores, &registry.Store{R: v.r, Storage: view, Admission: c.Admission})
	}
	runCtx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	go func() {
		if err := run(runCtx); err != nil && runCtx.Err() == nil {
			klog.FromContext(ctx).Error(err, "the watch cache of a custom resource stopped", "crd", crd.Name)
		}
	}()
	return s, nil
}

// publishIfChanged publishes after a change of what is served.
func (c *Controller) publishIfChanged() {
	if c.changed {
		c.changed = false
		c.publish()
	}
}

// publish hands the stores of every served CRD over, grouped by API group.
func (c *Controller) publish() {
	names := make([]string, 0, len(c.serving))
	for n := range c.serving {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		gi, gj := c.serving[names[i]].stores, c.serving[names[j]].stores
		if len(gi) > 0 && len(gj) > 0 && gi[0].R.Group != gj[0].R.Group {
			return gi[0].R.Group < gj[0].R.Group
		}
		return names[i] < names[j]
	})
	var stores []*registry.Store
	for _, n := range names {
		stores = append(stores, c.serving[n].stores...)
	}
	if c.Serve != nil {
		c.Serve(stores)
	}
}

func (c *Controller) stopAll() {
	for name, s := range c.serving {
		s.cancel()
		delete(c.serving, name)
	}
	c.publish()
}

// writeStatus writes the computed conditions and accepted names.
func (c *Controller) writeStatus(ctx context.Context, want *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	obj, _, err := c.CRDs.Update(ctx, "", want.Name, func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		cur, ok := current.(*apiextensionsv1.CustomResourceDefinition)
		if !exists || !ok || cur.UID != want.UID {
			return nil, fmt.Errorf("%w: CustomResourceDefinition %s", storage.ErrNotFound, want.Name)
		}
		out := cur.DeepCopy()
		out.Status.AcceptedNames = want.Status.AcceptedNames
		for _, cond := range want.Status.Conditions {
			setCondition(out, cond)
		}
		return out, nil
	}, c.CRDs.R.StatusStrategy, false)
	if err != nil {
		return nil, err
	}
	written, _ := obj.(*apiextensionsv1.CustomResourceDefinition)
	return written, nil
}

// cleanup deletes the instances of a CRD being deleted; once none is left
// it removes the cleanup finalizer, which lets the CRD go.
func (c *Controller) cleanup(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if s := c.serving[crd.Name]; s != nil && len(s.stores) > 0 {
		remaining, err := deleteInstances(ctx, s.stores[0])
		if err != nil {
			return err
		}
		if remaining > 0 {
			return fmt.Errorf("%d instances still being deleted", remaining)
		}
	}
	_, _, err := c.CRDs.Update(ctx, "", crd.Name, func(_ context.Context, current runtime.Object, exists bool) (runtime.Object, error) {
		cur, ok := current.(*apiextensionsv1.CustomResourceDefinition)
		if !exists || !ok || cur.UID != crd.UID {
			return nil, fmt.Errorf("%w: CustomResourceDefinition %s", storage.ErrNotFound, crd.Name)
		}
		out := cur.DeepCopy()
		var keep []string
		for _, f := range out.Finalizers {
			if f != CleanupFinalizer {
				keep = append(keep, f)
			}
		}
		out.Finalizers = keep
		setCondition(out, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
			Reason: "InstanceDeletionCompleted", Message: "removed all instances",
		})
		return out, nil
	}, c.CRDs.R.Strategy, false)
	return err
}

// deleteInstances deletes every instance and returns how many are left
// (waiting for their own finalizers).
func deleteInstances(ctx context.Context, s *registry.Store) (int, error) {
	obj, err := s.List(ctx, "", storage.ListOptions{})
	if err != nil {
		return 0, err
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return 0, err
	}
	remaining := 0
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return 0, err
		}
		if m.GetDeletionTimestamp() != nil {
			remaining++
			continue
		}
		if _, deleted, err := s.Delete(ctx, m.GetNamespace(), m.GetName(), nil, false); err != nil {
			if !registry.IsNotFound(err) {
				return 0, err
			}
		} else if !deleted {
			remaining++
		}
	}
	return remaining, nil
}
