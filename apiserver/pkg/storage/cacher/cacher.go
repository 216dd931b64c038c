package cacher

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/storage"
	"skiff.dev/apiserver/pkg/storage/etcd3"
)

// Config builds a Cacher.
type Config struct {
	Store *etcd3.Store
	// GetAttrs computes the labels and selectable fields of an object.
	GetAttrs    storage.AttrFunc
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// WindowSize is how many recent events are kept for watchers resuming
	// from a resourceVersion.
	WindowSize int
	// BookmarkInterval is how often watchers that asked get a BOOKMARK.
	BookmarkInterval time.Duration
	// WatcherBuffer is the number of events a watcher may lag behind.
	WatcherBuffer int
	// FreshnessTimeout bounds how long a request waits for the cache to
	// reach a revision it asked for.
	FreshnessTimeout time.Duration
	// GVK is set on the empty objects that carry bookmarks.
	GVK schema.GroupVersionKind
	// OnWatchersChanged reports the number of watchers (for metrics).
	OnWatchersChanged func(n int)
	// OnEvent is told of each event received from etcd (for metrics).
	OnEvent func()
	// KeepCreated: a create handed over to the cache (CreateHandedOver)
	// leaves its object for its event, made to look as its decoding
	// would (fastpath.AsDecoded), instead of the cache decoding the bytes
	// the watch brings back. Only for kinds whose decoding applies no
	// defaults (fastpath.DecodingDefaults), stored as protobuf.
	KeepCreated bool
}

type element struct {
	key    string
	obj    runtime.Object
	labels labels.Set
	fields fields.Set
	// json is obj's JSON encoding, made by the first JSON list that needs
	// it; an element never changes (an update makes a new one).
	json atomic.Pointer[[]byte]
}

type event struct {
	typ  watch.EventType
	key  string
	cur  *element
	prev *element
	rev  int64
}

// Cacher implements storage.Interface: writes go to etcd, watches and lists
// are served from memory.
type Cacher struct {
	cfg    Config
	store  *etcd3.Store
	prefix string

	mu    sync.RWMutex
	cond  *sync.Cond
	ready bool
	// rev is the revision the cache reflects.
	rev   int64
	items map[string]*element
	// window is a ring of the most recent events, oldest first from start.
	window     []*event
	start, n   int
	oldestRev  int64 // watches from revisions >= oldestRev can be served
	watchers   map[int]*watcher
	nextID     int
	stopped    bool
	watchCtxMu sync.Mutex
	watchCtx   context.Context
	// written holds the objects created through CreateHandedOver for
	// their events (Config.KeepCreated).
	written written
}

var _ storage.Interface = (*Cacher)(nil)

// New returns a Cacher; Start runs it.
func New(cfg Config) *Cacher {
	if cfg.WindowSize <= 0 {
		cfg.WindowSize = 10000
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = time.Minute
	}
	if cfg.WatcherBuffer <= 0 {
		cfg.WatcherBuffer = 1000
	}
	if cfg.FreshnessTimeout <= 0 {
		cfg.FreshnessTimeout = 3 * time.Second
	}
	if cfg.OnWatchersChanged == nil {
		cfg.OnWatchersChanged = func(int) {}
	}
	if cfg.OnEvent == nil {
		cfg.OnEvent = func() {}
	}
	c := &Cacher{
		cfg:      cfg,
		store:    cfg.Store,
		prefix:   cfg.Store.ResourcePrefix(),
		items:    map[string]*element{},
		window:   make([]*event, cfg.WindowSize),
		watchers: map[int]*watcher{},
	}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Start lists and watches etcd until ctx ends, relisting after errors.
func (c *Cacher) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("prefix", c.prefix)
	go func() {
		<-ctx.Done()
		c.mu.Lock()
		c.stopped = true
		for _, w := range c.watchers {
			w.stopLocked()
		}
		c.watchers = map[int]*watcher{}
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 8, Cap: 5 * time.Second}
	for ctx.Err() == nil {
		err := c.listAndWatch(ctx)
		if ctx.Err() != nil {
			return nil
		}
		logger.Error(err, "cache lost its etcd watch; listing again")
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff.Step()):
		}
	}
	return nil
}

func (c *Cacher) attrs(obj runtime.Object) (labels.Set, fields.Set) {
	l, f, err := c.cfg.GetAttrs(obj)
	if err != nil {
		return labels.Set{}, fields.Set{}
	}
	return l, f
}

func (c *Cacher) listAndWatch(ctx context.Context) error {
	kvs, rev, err := c.store.ListAll(ctx, c.prefix)
	if err != nil {
		return err
	}
	items := make(map[string]*element, len(kvs))
	for _, kv := range kvs {
		l, f := c.attrs(kv.Object)
		items[kv.Key] = &element{key: kv.Key, obj: kv.Object, labels: l, fields: f}
	}
	c.mu.Lock()
	if c.ready {
		// A gap between the old and the new state: watchers cannot be
		// served continuously, so close them; they resume or relist.
		for id, w := range c.watchers {
			w.stopLocked()
			delete(c.watchers, id)
		}
		c.cfg.OnWatchersChanged(0)
	}
	c.items = items
	c.rev = rev
	c.written.reset(rev)
	c.start, c.n = 0, 0
	c.oldestRev = rev
	c.ready = true
	c.cond.Broadcast()
	c.mu.Unlock()

	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	c.watchCtxMu.Lock()
	c.watchCtx = wctx
	c.watchCtxMu.Unlock()
	wch := c.store.Client().Watch(wctx, c.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify())

	ticker := time.NewTicker(c.cfg.BookmarkInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			// Ask etcd where it is, so a quiet resource's revision advances,
			// then tell bookmark watchers.
			_ = c.store.Client().RequestProgress(wctx)
			c.sendBookmarks()
		case resp, ok := <-wch:
			if !ok {
				return errors.New("etcd watch channel closed")
			}
			if err := resp.Err(); err != nil {
				return err
			}
			if resp.IsProgressNotify() {
				c.mu.Lock()
				if resp.Header.Revision > c.rev {
					c.rev = resp.Header.Revision
					c.cond.Broadcast()
				}
				c.mu.Unlock()
				continue
			}
			for _, ev := range resp.Events {
				e, err := c.event(ev)
				if err != nil {
					klog.FromContext(ctx).Error(err, "skipping undecodable event", "key", string(ev.Kv.Key))
					continue
				}
				c.apply(e)
			}
			c.mu.Lock()
			if resp.Header.Revision > c.rev {
				c.rev = resp.Header.Revision
			}
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}
}

// event is ev decoded, or made of the object a create handed over for it.
func (c *Cacher) event(ev *clientv3.Event) (*etcd3.Event, error) {
	c.cfg.OnEvent()
	if c.cfg.KeepCreated {
		key := string(ev.Kv.Key)
		if obj := c.written.take(key, ev.Kv.ModRevision, ev.IsCreate()); obj != nil {
			return &etcd3.Event{Type: watch.Added, Key: key, Object: obj, Revision: ev.Kv.ModRevision}, nil
		}
	}
	return c.store.DecodeEvent(ev)
}

// apply records one event in the state and the window and hands it to the watchers.
func (c *Cacher) apply(e *etcd3.Event) {
	// Outside the lock: computing them may take long (a custom resource's
	// may call its conversion webhook), and only this goroutine applies.
	l, f := c.attrs(e.Object)
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := &event{typ: e.Type, key: e.Key, rev: e.Revision}
	if prev, ok := c.items[e.Key]; ok {
		ev.prev = prev
	}
	ev.cur = &element{key: e.Key, obj: e.Object, labels: l, fields: f}
	if e.Type == watch.Deleted {
		delete(c.items, e.Key)
		if ev.prev == nil {
			ev.prev = ev.cur
		}
	} else {
		c.items[e.Key] = ev.cur
	}
	// Append to the ring; evicting the oldest moves oldestRev forward.
	if c.n == len(c.window) {
		c.oldestRev = c.window[c.start].rev
		c.window[c.start] = ev
		c.start = (c.start + 1) % len(c.window)
	} else {
		c.window[(c.start+c.n)%len(c.window)] = ev
		c.n++
	}
	if e.Revision > c.rev {
		c.rev = e.Revision
	}
	for id, w := range c.watchers {
		if !w.process(ev) {
			klog.V(2).InfoS("closing a watcher that fell behind", "prefix", c.prefix, "watcher", id)
			w.stopLocked()
			delete(c.watchers, id)
			c.cfg.OnWatchersChanged(len(c.watchers))
		}
	}
}

func (c *Cacher) sendBookmarks() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.watchers {
		if w.bookmarks {
			w.bookmark(c.rev, false)
		}
	}
}

// waitUntilFresh blocks until the cache has reached rev (or times out).
func (c *Cacher) waitUntilFreshLocked(ctx context.Context, rev int64) error {
	if c.ready && c.rev >= rev {
		// Fresh already (every resourceVersion=0 read, most others): no
		// timer, no context hook.
		return nil
	}
	deadline := time.Now().Add(c.cfg.FreshnessTimeout)
	timer := time.AfterFunc(c.cfg.FreshnessTimeout, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	asked := false
	for !c.ready || c.rev < rev {
		if c.stopped {
			return fmt.Errorf("%w: the cache is shutting down", storage.ErrUnavailable)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			if !c.ready {
				return fmt.Errorf("%w: the watch cache is not ready yet", storage.ErrUnavailable)
			}
			return fmt.Errorf("%w: too large resource version: %d, current: %d", storage.ErrTooLargeResourceVersion, rev, c.rev)
		}
		if c.ready && !asked {
			asked = true
			c.watchCtxMu.Lock()
			wctx := c.watchCtx
			c.watchCtxMu.Unlock()
			if wctx != nil {
				go func() { _ = c.store.Client().RequestProgress(wctx) }()
			}
		}
		c.cond.Wait()
	}
	return nil
}

// Create, Get, GuaranteedUpdate and Delete go to etcd.

func (c *Cacher) Create(ctx context.Context, key string, obj runtime.Object) (runtime.Object, error) {
	return c.store.Create(ctx, key, obj)
}

// CreateHandedOver creates obj as Create does, for a caller that hands obj
// over: once it returns, the caller only reads out (to answer the
// request). With Config.KeepCreated, the cache keeps out, made to look as
// its decoding from storage would (fastpath.AsDecoded), for the event of
// its creation instead of decoding the bytes etcd sends back, and written
// is the bytes stored (without a resourceVersion) when they are still
// out's encoding; else out is Create's and written is nil. A fast path:
// TestCreateHandedOverIsTheDecoding compares it with Create.
func (c *Cacher) CreateHandedOver(ctx context.Context, key string, obj runtime.Object) (out runtime.Object, written []byte, err error) {
	if !c.cfg.KeepCreated {
		out, err = c.store.Create(ctx, key, obj)
		return out, nil, err
	}
	out, written, err = c.store.CreateWritten(ctx, key, obj)
	if err != nil {
		return nil, nil, err
	}
	m, err := meta.Accessor(out)
	if err != nil {
		return nil, nil, err
	}
	rev, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return nil, nil, err
	}
	if !c.cfg.GVK.Empty() {
		out.GetObjectKind().SetGroupVersionKind(c.cfg.GVK)
	}
	// The object is no longer what was written if a nil map value became
	// empty.
	if fastpath.AsDecoded(out) {
		written = nil
	}
	c.written.put(key, rev, out)
	return out, written, nil
}

func (c *Cacher) Get(ctx context.Context, key string) (runtime.Object, error) {
	return c.store.Get(ctx, key)
}

// GetCached returns the object at key as the cache holds it now, without
// asking etcd: the cache's own object, which the caller must not modify (as
// an informer's lister hands out its cache's, and as Objects does); false
// when the cache is not ready or has no such object (admission plugins
// read it as upstream's read their listers, and fall back to etcd).
func (c *Cacher) GetCached(key string) (runtime.Object, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return nil, false
	}
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	return e.obj, true
}

func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, p *storage.Preconditions, ignoreNotFound bool, f storage.UpdateFunc) (runtime.Object, error) {
	return c.store.GuaranteedUpdate(ctx, key, p, ignoreNotFound, f)
}

func (c *Cacher) Delete(ctx context.Context, key string, p *storage.Preconditions, v storage.ValidateDeletion) (runtime.Object, error) {
	return c.store.Delete(ctx, key, p, v)
}

func (c *Cacher) CurrentRevision(ctx context.Context) (int64, error) {
	return c.store.CurrentRevision(ctx)
}

// GetList serves from memory unless the request pages (limit or continue
// with a resourceVersion other than "0") or asks for an exact old revision;
// those go to etcd, as upstream does.
func (c *Cacher) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	matched, listRev, ok, err := c.list(ctx, key, opts)
	if err != nil {
		return err
	}
	if !ok {
		return c.store.GetList(ctx, key, opts, listObj)
	}
	itemsPtr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return err
	}
	v, err := conversion.EnforcePtr(itemsPtr)
	if err != nil {
		return err
	}
	slice := reflect.MakeSlice(v.Type(), len(matched), len(matched))
	ptrItems := v.Type().Elem().Kind() == reflect.Ptr
	for i, e := range matched {
		ov := reflect.ValueOf(e.obj)
		if ptrItems {
			slice.Index(i).Set(ov)
		} else {
			// A shallow copy of the cached value: readers must not mutate it.
			slice.Index(i).Set(ov.Elem())
		}
	}
	v.Set(slice)
	return storage.SetResourceVersion(listObj, listRev)
}

// Objects is a list with resourceVersion=0 of everything under key, in key
// order, without a list object: the cache's own objects, which the caller
// must not modify (as an informer's lister hands out its cache's). ok is
// false when the cache cannot answer; the caller then lists with GetList.
func (c *Cacher) Objects(ctx context.Context, key string) (objs []runtime.Object, ok bool, err error) {
	if c.objectsReady(key, &objs) {
		return objs, true, nil
	}
	matched, _, ok, err := c.list(ctx, key, storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil || !ok {
		return nil, false, err
	}
	objs = make([]runtime.Object, len(matched))
	for i, e := range matched {
		objs[i] = e.obj
	}
	return objs, true, nil
}

// objectsReady is Objects when the cache is ready (every resourceVersion=0
// read is fresh then): under the read lock, allocating only for what it
// returns, as admission plugins read small collections (a namespace's
// LimitRanges and ResourceQuotas, the PriorityClasses) on every write.
func (c *Cacher) objectsReady(key string, objs *[]runtime.Object) bool {
	prefix := key
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return false
	}
	var matched []*element
	for k, e := range c.items {
		if strings.HasPrefix(k, prefix) {
			matched = append(matched, e)
		}
	}
	if len(matched) > 1 {
		slices.SortFunc(matched, func(a, b *element) int { return strings.Compare(a.key, b.key) })
	}
	if len(matched) > 0 {
		*objs = make([]runtime.Object, len(matched))
		for i, e := range matched {
			(*objs)[i] = e.obj
		}
	}
	return true
}

// EncodedList is GetList for a JSON response: the JSON encodings of the
// items (each made by encode once per version of an object and kept with
// it, so a list of unchanged objects encodes nothing), in key order, and
// the list's revision. ok is false when the cache cannot answer (a limit, a
// continue token, an exact revision): the caller lists with GetList.
func (c *Cacher) EncodedList(ctx context.Context, key string, opts storage.ListOptions, encode func(runtime.Object) ([]byte, error)) (items [][]byte, rev int64, ok bool, err error) {
	matched, rev, ok, err := c.list(ctx, key, opts)
	if err != nil || !ok {
		return nil, 0, false, err
	}
	items = make([][]byte, len(matched))
	for i, e := range matched {
		if data := e.json.Load(); data != nil {
			items[i] = *data
			continue
		}
		data, err := encode(e.obj)
		if err != nil {
			return nil, 0, false, err
		}
		e.json.Store(&data)
		items[i] = data
	}
	return items, rev, true, nil
}

// list selects the elements a list returns, in key order, and the revision
// it is at; ok is false when the list must come from etcd.
func (c *Cacher) list(ctx context.Context, key string, opts storage.ListOptions) (matched []*element, listRev int64, ok bool, err error) {
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, 0, false, err
	}
	hasLimit := opts.Predicate.Limit > 0 && opts.ResourceVersion != "0"
	if opts.FromStorage || opts.Predicate.Continue != "" || hasLimit || opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact || !opts.Recursive {
		return nil, 0, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if opts.ResourceVersion == "" {
		c.mu.Unlock()
		cur, err := c.store.CurrentRevision(ctx)
		c.mu.Lock()
		if err != nil {
			return nil, 0, false, err
		}
		rv = cur
	}
	if err := c.waitUntilFreshLocked(ctx, rv); err != nil {
		if errors.Is(err, storage.ErrTooLargeResourceVersion) && opts.ResourceVersion == "" {
			// The cache is behind a consistent read: fall back to etcd.
			return nil, 0, false, nil
		}
		return nil, 0, false, err
	}
	prefix := key
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	pred := opts.Predicate
	matched = make([]*element, 0, len(c.items))
	for k, e := range c.items {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if pred.MatchesAttrs(e.labels, e.fields) {
			matched = append(matched, e)
		}
	}
	listRev = c.rev
	c.mu.Unlock()
	defer c.mu.Lock()
	sort.Slice(matched, func(i, j int) bool { return matched[i].key < matched[j].key })
	return matched, listRev, true, nil
}

// Watch serves a watcher from the window.
func (c *Cacher) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	prefix := key
	if opts.Recursive && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	sendInitial := rv == 0
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if opts.ResourceVersion == "" && opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		// Watch-list with a consistent start: catch up with etcd first.
		c.mu.Unlock()
		cur, err := c.store.CurrentRevision(ctx)
		c.mu.Lock()
		if err != nil {
			return nil, err
		}
		rv = cur
	}
	if err := c.waitUntilFreshLocked(ctx, rv); err != nil {
		return nil, err
	}
	if !sendInitial && rv == 0 {
		// "Start at most recent" without the current state.
		rv = c.rev
	}
	if !sendInitial && rv < c.oldestRev {
		return nil, fmt.Errorf("%w: too old resource version: %d (%d)", storage.ErrGone, rv, c.oldestRev)
	}
	w := &watcher{
		cacher:    c,
		prefix:    prefix,
		exact:     !opts.Recursive,
		key:       key,
		pred:      opts.Predicate,
		bookmarks: opts.AllowWatchBookmarks,
		input:     make(chan watch.Event, c.cfg.WatcherBuffer),
		result:    make(chan watch.Event),
		done:      make(chan struct{}),
		newFunc:   c.cfg.NewFunc,
	}
	var initial []watch.Event
	if sendInitial {
		snapshot := make([]*element, 0)
		for k, e := range c.items {
			if w.keyMatches(k) && w.pred.MatchesAttrs(e.labels, e.fields) {
				snapshot = append(snapshot, e)
			}
		}
		sort.Slice(snapshot, func(i, j int) bool { return snapshot[i].key < snapshot[j].key })
		initial = make([]watch.Event, 0, len(snapshot)+1)
		for _, e := range snapshot {
			initial = append(initial, watch.Event{Type: watch.Added, Object: e.obj})
		}
		if opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks {
			initial = append(initial, watch.Event{Type: watch.Bookmark, Object: w.bookmarkObject(c.rev, true)})
		}
	} else {
		for i := 0; i < c.n; i++ {
			ev := c.window[(c.start+i)%len(c.window)]
			if ev.rev <= rv {
				continue
			}
			if out, ok := w.convert(ev); ok {
				initial = append(initial, out)
			}
		}
	}
	id := c.nextID
	c.nextID++
	c.watchers[id] = w
	w.id = id
	c.cfg.OnWatchersChanged(len(c.watchers))
	go w.run(ctx, initial)
	return w, nil
}

func (c *Cacher) removeWatcher(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.watchers[id]; ok {
		w.stopLocked()
		delete(c.watchers, id)
		c.cfg.OnWatchersChanged(len(c.watchers))
	}
}

// watcher is one client's view of the event stream.
type watcher struct {
	id        int
	cacher    *Cacher
	prefix    string
	exact     bool
	key       string
	pred      storage.SelectionPredicate
	bookmarks bool
	newFunc   func() runtime.Object
	input     chan watch.Event
	result    chan watch.Event
	done      chan struct{}
	stopOnce  sync.Once
	closed    bool // guarded by cacher.mu
}

func (w *watcher) keyMatches(k string) bool {
	if w.exact {
		return k == w.key
	}
	return strings.HasPrefix(k, w.prefix)
}

// convert applies the selector to the old and new state of an event.
func (w *watcher) convert(ev *event) (watch.Event, bool) {
	if !w.keyMatches(ev.key) {
		return watch.Event{}, false
	}
	curOK := ev.typ != watch.Deleted && w.pred.MatchesAttrs(ev.cur.labels, ev.cur.fields)
	prevOK := ev.prev != nil && w.pred.MatchesAttrs(ev.prev.labels, ev.prev.fields)
	switch {
	case ev.typ == watch.Deleted && prevOK:
		return watch.Event{Type: watch.Deleted, Object: ev.cur.obj}, true
	case ev.typ == watch.Deleted:
		return watch.Event{}, false
	case curOK && prevOK:
		return watch.Event{Type: watch.Modified, Object: ev.cur.obj}, true
	case curOK:
		return watch.Event{Type: watch.Added, Object: ev.cur.obj}, true
	case prevOK:
		// Left the selector: the previous state, at this event's revision.
		obj := ev.prev.obj.DeepCopyObject()
		_ = storage.SetResourceVersion(obj, ev.rev)
		return watch.Event{Type: watch.Deleted, Object: obj}, true
	}
	return watch.Event{}, false
}

// process is called with cacher.mu held; false means the watcher is too slow.
func (w *watcher) process(ev *event) bool {
	if w.closed {
		return true
	}
	out, ok := w.convert(ev)
	if !ok {
		return true
	}
	select {
	case w.input <- out:
		return true
	default:
		return false
	}
}

func (w *watcher) bookmarkObject(rev int64, initialEnd bool) runtime.Object {
	obj := w.newFunc()
	obj.GetObjectKind().SetGroupVersionKind(w.cacher.cfg.GVK)
	_ = storage.SetResourceVersion(obj, rev)
	if initialEnd {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
	}
	return obj
}

// bookmark is called with cacher.mu held; it never blocks.
func (w *watcher) bookmark(rev int64, initialEnd bool) {
	if w.closed {
		return
	}
	select {
	case w.input <- watch.Event{Type: watch.Bookmark, Object: w.bookmarkObject(rev, initialEnd)}:
	default:
	}
}

func (w *watcher) stopLocked() {
	if !w.closed {
		w.closed = true
		close(w.input)
	}
}

func (w *watcher) run(ctx context.Context, initial []watch.Event) {
	defer close(w.result)
	send := func(e watch.Event) bool {
		select {
		case w.result <- e:
			return true
		case <-w.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
	for _, e := range initial {
		if !send(e) {
			w.cacher.removeWatcher(w.id)
			return
		}
	}
	for {
		select {
		case e, ok := <-w.input:
			if !ok {
				return
			}
			if !send(e) {
				w.cacher.removeWatcher(w.id)
				return
			}
		case <-w.done:
			w.cacher.removeWatcher(w.id)
			return
		case <-ctx.Done():
			w.cacher.removeWatcher(w.id)
			return
		}
	}
}

// Stop ends the watch; ResultChan is closed soon after.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() { close(w.done) })
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// ErrorEvent builds the watch.Error event for err, as upstream sends it.
func ErrorEvent(err error) watch.Event {
	var status metav1.Status
	switch {
	case errors.Is(err, storage.ErrGone):
		status = apierrors.NewResourceExpired(err.Error()).Status()
	default:
		status = apierrors.NewInternalError(err).Status()
	}
	return watch.Event{Type: watch.Error, Object: &status}
}

// Revision is the revision the cache reflects (for tests and metrics).
func (c *Cacher) Revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// Ready reports whether the initial list is done.
func (c *Cacher) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}
