package etcd3

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/storage"
)

// etcdWatcher streams decoded events of one key or prefix straight from
// etcd, those its selector selects (see watchEvent).
type etcdWatcher struct {
	cancel context.CancelFunc
	result chan watch.Event
	once   sync.Once
}

func newEtcdWatcher(ctx context.Context, s *Store, key string, recursive bool, rev int64, pred storage.SelectionPredicate) *etcdWatcher {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	w := &etcdWatcher{cancel: cancel, result: make(chan watch.Event, 100)}
	opts := []clientv3.OpOption{clientv3.WithPrevKV()}
	if recursive {
		opts = append(opts, clientv3.WithPrefix())
	}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev+1))
	}
	wch := s.cfg.Client.Watch(ctx, key, opts...)
	go func() {
		defer close(w.result)
		for resp := range wch {
			if err := resp.Err(); err != nil {
				status := apierrors.NewInternalError(err).Status()
				if resp.CompactRevision != 0 {
					status = apierrors.NewResourceExpired(err.Error()).Status()
				}
				select {
				case w.result <- watch.Event{Type: watch.Error, Object: &status}:
				case <-ctx.Done():
				}
				return
			}
			for _, ev := range resp.Events {
				out, ok, err := s.watchEvent(ev, pred)
				if err != nil {
					status := apierrors.NewInternalError(err).Status()
					out = watch.Event{Type: watch.Error, Object: &status}
				} else if !ok {
					continue
				}
				select {
				case w.result <- out:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}
	}()
	return w
}

// watchEvent decodes ev and applies pred to it, as upstream's etcd3 watcher
// and skiff's watch cache do: a change to an object the selector selects
// before and after is MODIFIED; one that comes into the selection is ADDED;
// one that leaves it is DELETED, with its last selected state at the
// change's revision; a creation or deletion is sent when the object it
// carries is selected. ok is false for a change the watch does not send.
func (s *Store) watchEvent(ev *clientv3.Event, pred storage.SelectionPredicate) (out watch.Event, ok bool, err error) {
	e, err := s.DecodeEvent(ev)
	if err != nil {
		return watch.Event{}, false, err
	}
	out = watch.Event{Type: e.Type, Object: e.Object}
	if pred.Empty() {
		return out, true, nil
	}
	cur, err := pred.Matches(e.Object)
	if err != nil || e.Type != watch.Modified {
		return out, cur, err
	}
	if ev.PrevKv == nil {
		// Asked for with WithPrevKV; etcd leaves it out only when the
		// previous revision is compacted away. Without it, the change is
		// sent as what the object now is.
		return out, cur, nil
	}
	prevObj, err := s.Decode(ev.PrevKv.Value, ev.Kv.ModRevision)
	if err != nil {
		return watch.Event{}, false, err
	}
	prev, err := pred.Matches(prevObj)
	switch {
	case err != nil:
		return watch.Event{}, false, err
	case cur && !prev:
		out.Type = watch.Added
	case !cur && prev:
		out = watch.Event{Type: watch.Deleted, Object: prevObj}
	}
	return out, cur || prev, nil
}

func (w *etcdWatcher) Stop()                          { w.once.Do(w.cancel) }
func (w *etcdWatcher) ResultChan() <-chan watch.Event { return w.result }
