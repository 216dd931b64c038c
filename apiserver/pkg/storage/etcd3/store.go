package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/storage"
)

// ObserveFunc records how long an etcd operation on a type took.
type ObserveFunc func(operation, typ string, elapsed time.Duration)

// Config builds a Store for one resource.
type Config struct {
	Client *clientv3.Client
	// Codec encodes to the storage format and decodes from it.
	Codec runtime.Codec
	// NewFunc and NewListFunc make empty objects of the resource's kind.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// ResourcePrefix is the key prefix of the resource, e.g. "/registry/pods/".
	ResourcePrefix string
	GroupResource  schema.GroupResource
	// GVK is set on every decoded object, so that objects shared by many
	// readers are never mutated when they are encoded.
	GVK schema.GroupVersionKind
	// RequestTimeout bounds each etcd call, so a dead etcd fails requests fast.
	RequestTimeout time.Duration
	Observe        ObserveFunc
}

// Store is storage.Interface over etcd.
type Store struct {
	cfg     Config
	typName string
}

var _ storage.Interface = (*Store)(nil)

// New returns a Store for one resource.
func New(cfg Config) *Store {
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string, time.Duration) {}
	}
	typ := fmt.Sprintf("%T", cfg.NewFunc())
	return &Store{cfg: cfg, typName: strings.TrimPrefix(typ, "*")}
}

// Client exposes the etcd client (the cacher watches through it).
func (s *Store) Client() *clientv3.Client { return s.cfg.Client }

// ResourcePrefix is the key prefix of the resource.
func (s *Store) ResourcePrefix() string { return s.cfg.ResourcePrefix }

func (s *Store) observe(op string, start time.Time) {
	s.cfg.Observe(op, s.typName, time.Since(start))
}

func (s *Store) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RequestTimeout)
}

// Encode writes obj in the storage format, without its resourceVersion.
func (s *Store) Encode(obj runtime.Object) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	defer m.SetResourceVersion(rv)
	return runtime.Encode(s.cfg.Codec, obj)
}

// Decode reads a stored value and sets its resourceVersion to rev.
func (s *Store) Decode(data []byte, rev int64) (runtime.Object, error) {
	obj, _, err := s.cfg.Codec.Decode(data, nil, s.cfg.NewFunc())
	if err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", s.cfg.GroupResource, err)
	}
	if err := storage.SetResourceVersion(obj, rev); err != nil {
		return nil, err
	}
	if !s.cfg.GVK.Empty() {
		obj.GetObjectKind().SetGroupVersionKind(s.cfg.GVK)
	}
	return obj, nil
}

// mapErr turns etcd and gRPC errors into storage sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted), errors.Is(err, rpctypes.ErrGRPCCompacted):
		return fmt.Errorf("%w: %v", storage.ErrGone, err)
	case errors.Is(err, rpctypes.ErrRequestTooLarge), errors.Is(err, rpctypes.ErrGRPCRequestTooLarge):
		return fmt.Errorf("%w: %v", storage.ErrTooLarge, err)
	case errors.Is(err, rpctypes.ErrFutureRev), errors.Is(err, rpctypes.ErrGRPCFutureRev):
		return fmt.Errorf("%w: %v", storage.ErrTooLargeResourceVersion, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: etcd did not answer in time: %v", storage.ErrTimeout, err)
	case errors.Is(err, context.Canceled):
		return err
	}
	if st, ok := status.FromError(err); ok {
		switch st.Message() {
		case rpctypes.ErrRequestTooLarge.Error():
			return fmt.Errorf("%w: %v", storage.ErrTooLarge, err)
		case rpctypes.ErrFutureRev.Error():
			return fmt.Errorf("%w: %v", storage.ErrTooLargeResourceVersion, err)
		case rpctypes.ErrCompacted.Error():
			return fmt.Errorf("%w: %v", storage.ErrGone, err)
		}
		switch st.Code() {
		case codes.Unavailable:
			return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
		case codes.DeadlineExceeded:
			return fmt.Errorf("%w: %v", storage.ErrTimeout, err)
		}
	}
	return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
}

// Create stores obj under key if the key does not exist yet.
func (s *Store) Create(ctx context.Context, key string, obj runtime.Object) (out runtime.Object, err error) {
	ctx, end := s.traceOp(ctx, "Create", key)
	defer func() { end(out, err) }()
	data, rev, err := s.create(ctx, key, obj)
	if err != nil {
		return nil, err
	}
	// What was stored, as a read of it gives it (upstream decodes the
	// written bytes the same way).
	return s.Decode(data, rev)
}

// CreateWritten stores obj as Create does, but returns obj itself, its
// resourceVersion set, instead of the decoding of what was stored, and the
// bytes it wrote (the storage encoding, without a resourceVersion): the
// watch cache's fast path for a create handed over to it
// (cacher.CreateHandedOver).
func (s *Store) CreateWritten(ctx context.Context, key string, obj runtime.Object) (out runtime.Object, written []byte, err error) {
	ctx, end := s.traceOp(ctx, "Create", key)
	defer func() { end(out, err) }()
	data, rev, err := s.create(ctx, key, obj)
	if err != nil {
		return nil, nil, err
	}
	if err := storage.SetResourceVersion(obj, rev); err != nil {
		return nil, nil, err
	}
	return obj, data, nil
}

// create writes obj's encoding at key if the key does not exist yet, and
// returns the bytes written and the revision of the write.
func (s *Store) create(ctx context.Context, key string, obj runtime.Object) ([]byte, int64, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetResourceVersion() != "" {
		return nil, 0, fmt.Errorf("%w: resourceVersion should not be set on objects to be created", storage.ErrInvalid)
	}
	data, err := s.Encode(obj)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := s.opCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := s.cfg.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(data))).
		Commit()
	s.observe("create", start)
	if err != nil {
		return nil, 0, mapErr(err)
	}
	if !resp.Succeeded {
		return nil, 0, fmt.Errorf("%w: key %s", storage.ErrAlreadyExists, key)
	}
	return data, resp.Header.Revision, nil
}

// Get reads the object at key.
func (s *Store) Get(ctx context.Context, key string) (out runtime.Object, err error) {
	ctx, end := s.traceOp(ctx, "Get", key)
	defer func() { end(out, err) }()
	ctx, cancel := s.opCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := s.cfg.Client.Get(ctx, key)
	s.observe("get", start)
	if err != nil {
		return nil, mapErr(err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("%w: key %s", storage.ErrNotFound, key)
	}
	return s.Decode(resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
}

// CurrentRevision reads etcd's current revision.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	ctx, cancel := s.opCtx(ctx)
	defer cancel()
	start := time.Now()
	// A count-only range over one key is the cheapest read that returns a header.
	resp, err := s.cfg.Client.Get(ctx, s.cfg.ResourcePrefix, clientv3.WithCountOnly())
	s.observe("currentRevision", start)
	if err != nil {
		return 0, mapErr(err)
	}
	return resp.Header.Revision, nil
}

// KV is one decoded object with its key, as the cacher needs them.
type KV struct {
	Key    string
	Object runtime.Object
}

// ListAll reads every object under prefix at the latest revision, in pages,
// all at the revision of the first page. It returns the objects in key order.
func (s *Store) ListAll(ctx context.Context, prefix string) ([]KV, int64, error) {
	var out []KV
	var rev int64
	from := prefix
	end := clientv3.GetPrefixRangeEnd(prefix)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(10000)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		cctx, cancel := s.opCtx(ctx)
		start := time.Now()
		resp, err := s.cfg.Client.Get(cctx, from, opts...)
		s.observe("list", start)
		cancel()
		if err != nil {
			return nil, 0, mapErr(err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			obj, err := s.Decode(kv.Value, kv.ModRevision)
			if err != nil {
				klog.FromContext(ctx).Error(err, "skipping undecodable object", "key", string(kv.Key))
				continue
			}
			out = append(out, KV{Key: string(kv.Key), Object: obj})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// GetList reads from etcd, filtered by the predicate, paged by limit and continue.
func (s *Store) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	listPtr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return err
	}
	v, err := conversion.EnforcePtr(listPtr)
	if err != nil {
		return err
	}
	keyPrefix := key
	if opts.Recursive && !strings.HasSuffix(keyPrefix, "/") {
		keyPrefix += "/"
	}
	pred := opts.Predicate
	fromKey := keyPrefix
	var withRev int64
	var minRev int64
	if pred.Continue != "" {
		if !opts.Recursive {
			return fmt.Errorf("%w: continue key is not supported for a single object", storage.ErrInvalid)
		}
		fromKey, withRev, err = storage.DecodeContinue(pred.Continue, keyPrefix)
		if err != nil {
			return err
		}
		if withRev < 0 {
			withRev = 0 // the latest revision
		}
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return fmt.Errorf("%w: specifying resource version is not allowed when using continue", storage.ErrInvalid)
		}
	} else {
		rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
		if err != nil {
			return err
		}
		switch opts.ResourceVersionMatch {
		case "Exact":
			withRev = rv
		case "NotOlderThan", "":
			minRev = rv
		}
	}

	var getOpts []clientv3.OpOption
	if opts.Recursive {
		getOpts = append(getOpts, clientv3.WithRange(clientv3.GetPrefixRangeEnd(keyPrefix)))
	}
	limit := pred.Limit
	if !opts.Recursive {
		limit = 0
	}
	pageSize := limit
	if pageSize > 0 && !pred.Empty() {
		// With a selector, fetch more per round trip since some are filtered out.
		pageSize = max(pageSize, 100)
	}
	if pageSize > 0 {
		getOpts = append(getOpts, clientv3.WithLimit(pageSize))
	}
	var (
		lastKey   []byte
		hasMore   bool
		count     int64
		remaining int64
	)
	for {
		o := getOpts
		if withRev > 0 {
			o = append(o, clientv3.WithRev(withRev))
		}
		cctx, cancel := s.opCtx(ctx)
		start := time.Now()
		resp, err := s.cfg.Client.Get(cctx, fromKey, o...)
		s.observe("list", start)
		cancel()
		if err != nil {
			err = mapErr(err)
			if errors.Is(err, storage.ErrGone) && pred.Continue != "" {
				// As upstream: a token that continues at the latest revision.
				token, _ := storage.EncodeContinue(fromKey, keyPrefix, storage.InconsistentContinueRV)
				return &storage.ContinueExpiredError{Continue: token}
			}
			return err
		}
		if withRev == 0 {
			withRev = resp.Header.Revision
			if minRev > withRev {
				return fmt.Errorf("%w: resourceVersion %d is newer than the current revision %d", storage.ErrTooLargeResourceVersion, minRev, withRev)
			}
		}
		hasMore = resp.More
		if len(resp.Kvs) == 0 && resp.More {
			return fmt.Errorf("no results were found, but etcd indicated there were more values remaining")
		}
		for i, kv := range resp.Kvs {
			if limit > 0 && count >= limit {
				hasMore = true
				remaining = int64(len(resp.Kvs) - i)
				break
			}
			lastKey = kv.Key
			obj, err := s.Decode(kv.Value, kv.ModRevision)
			if err != nil {
				klog.FromContext(ctx).Error(err, "skipping undecodable object", "key", string(kv.Key))
				continue
			}
			ok, err := pred.Matches(obj)
			if err != nil {
				return err
			}
			if ok {
				v.Set(reflectAppend(v, obj))
				count++
			}
		}
		if remaining == 0 && resp.More {
			remaining = resp.Count - int64(len(resp.Kvs))
		}
		if !hasMore || (limit > 0 && count >= limit) {
			break
		}
		fromKey = string(lastKey) + "\x00"
		remaining = 0
	}
	if v.IsNil() {
		v.Set(reflectMakeSlice(v))
	}
	if err := storage.SetResourceVersion(listObj, withRev); err != nil {
		return err
	}
	if hasMore && limit > 0 {
		next, err := storage.EncodeContinue(string(lastKey)+"\x00", keyPrefix, withRev)
		if err != nil {
			return err
		}
		l, err := meta.ListAccessor(listObj)
		if err != nil {
			return err
		}
		l.SetContinue(next)
		if pred.Empty() && remaining > 0 {
			l.SetRemainingItemCount(&remaining)
		}
	}
	return nil
}

// GuaranteedUpdate reads the object, applies tryUpdate and writes the result
// if the key has not changed since it was read; on a race it reads again and
// retries. A resourceVersion precondition that no longer matches fails with
// ErrConflict instead of retrying.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, preconditions *storage.Preconditions, ignoreNotFound bool, tryUpdate storage.UpdateFunc) (out runtime.Object, err error) {
	ctx, end := s.traceOp(ctx, "GuaranteedUpdate", key)
	defer func() { end(out, err) }()
	var (
		current runtime.Object
		modRev  int64
		// stored is current's value in etcd: an update that encodes to
		// the same bytes changes nothing (upstream compares them too).
		stored []byte
	)
	read := func() error {
		cctx, cancel := s.opCtx(ctx)
		defer cancel()
		start := time.Now()
		resp, err := s.cfg.Client.Get(cctx, key)
		s.observe("get", start)
		if err != nil {
			return mapErr(err)
		}
		if len(resp.Kvs) == 0 {
			if !ignoreNotFound {
				return fmt.Errorf("%w: key %s", storage.ErrNotFound, key)
			}
			current, modRev, stored = s.cfg.NewFunc(), 0, nil
			return nil
		}
		current, err = s.Decode(resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
		modRev, stored = resp.Kvs[0].ModRevision, resp.Kvs[0].Value
		return err
	}
	if err := read(); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if modRev != 0 {
			if err := preconditions.Check(key, current); err != nil {
				return nil, err
			}
		}
		updated, err := tryUpdate(current)
		if err != nil {
			return nil, err
		}
		data, err := s.Encode(updated)
		if err != nil {
			return nil, err
		}
		if modRev != 0 && bytes.Equal(stored, data) {
			// Nothing changed: no write, the object keeps its revision.
			return current, nil
		}
		cctx, cancel := s.opCtx(ctx)
		start := time.Now()
		resp, err := s.cfg.Client.Txn(cctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
			Then(clientv3.OpPut(key, string(data))).
			Else(clientv3.OpGet(key)).
			Commit()
		s.observe("update", start)
		cancel()
		if err != nil {
			return nil, mapErr(err)
		}
		if resp.Succeeded {
			return s.Decode(data, resp.Header.Revision)
		}
		// Lost the race: take the current value from the Else branch and retry.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			if !ignoreNotFound {
				return nil, fmt.Errorf("%w: key %s", storage.ErrNotFound, key)
			}
			current, modRev, stored = s.cfg.NewFunc(), 0, nil
			continue
		}
		current, err = s.Decode(kvs[0].Value, kvs[0].ModRevision)
		if err != nil {
			return nil, err
		}
		modRev, stored = kvs[0].ModRevision, kvs[0].Value
		klog.FromContext(ctx).V(4).Info("update raced, retrying", "key", key, "attempt", attempt+1)
	}
}

// Delete removes the object if it is unchanged since read and the
// preconditions and validate hook accept it. It returns the deleted object
// with the revision of the deletion as its resourceVersion.
func (s *Store) Delete(ctx context.Context, key string, preconditions *storage.Preconditions, validate storage.ValidateDeletion) (out runtime.Object, err error) {
	ctx, end := s.traceOp(ctx, "Delete", key)
	defer func() { end(out, err) }()
	cctx, cancel := s.opCtx(ctx)
	start := time.Now()
	resp, err := s.cfg.Client.Get(cctx, key)
	s.observe("get", start)
	cancel()
	if err != nil {
		return nil, mapErr(err)
	}
	for {
		if len(resp.Kvs) == 0 {
			return nil, fmt.Errorf("%w: key %s", storage.ErrNotFound, key)
		}
		kv := resp.Kvs[0]
		obj, err := s.Decode(kv.Value, kv.ModRevision)
		if err != nil {
			return nil, err
		}
		if err := preconditions.Check(key, obj); err != nil {
			return nil, err
		}
		if validate != nil {
			if err := validate(ctx, obj); err != nil {
				return nil, err
			}
		}
		cctx, cancel := s.opCtx(ctx)
		start := time.Now()
		txn, err := s.cfg.Client.Txn(cctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).
			Commit()
		s.observe("delete", start)
		cancel()
		if err != nil {
			return nil, mapErr(err)
		}
		if txn.Succeeded {
			if err := storage.SetResourceVersion(obj, txn.Header.Revision); err != nil {
				return nil, err
			}
			return obj, nil
		}
		r := txn.Responses[0].GetResponseRange()
		resp = &clientv3.GetResponse{Header: r.Header, Kvs: r.Kvs}
	}
}

// Watch watches etcd directly from the revision after opts.ResourceVersion,
// sending what opts.Predicate selects (watchEvent). The API server serves
// watchers from the cacher; this is its source.
func (s *Store) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	rev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	w := newEtcdWatcher(ctx, s, key, opts.Recursive, rev, opts.Predicate)
	return w, nil
}

// Event is one decoded etcd change.
type Event struct {
	Type     watch.EventType
	Key      string
	Object   runtime.Object // for DELETED: the last state, with the deletion revision
	Revision int64
}

// DecodeEvent turns an etcd watch event (with prev_kv) into an Event. The
// previous value of an update is not decoded: the cacher has it already,
// and a watch straight from etcd sends only the new one.
func (s *Store) DecodeEvent(ev *clientv3.Event) (*Event, error) {
	out := &Event{Key: string(ev.Kv.Key), Revision: ev.Kv.ModRevision}
	var err error
	switch {
	case ev.Type == mvccpb.DELETE:
		out.Type = watch.Deleted
		if ev.PrevKv == nil {
			return nil, fmt.Errorf("etcd delete event for %s has no previous value", out.Key)
		}
		if out.Object, err = s.Decode(ev.PrevKv.Value, ev.Kv.ModRevision); err != nil {
			return nil, err
		}
	case ev.IsCreate():
		out.Type = watch.Added
		if out.Object, err = s.Decode(ev.Kv.Value, ev.Kv.ModRevision); err != nil {
			return nil, err
		}
	default:
		out.Type = watch.Modified
		if out.Object, err = s.Decode(ev.Kv.Value, ev.Kv.ModRevision); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FormatRevision renders a revision as a resourceVersion.
func FormatRevision(rev int64) string { return strconv.FormatInt(rev, 10) }
