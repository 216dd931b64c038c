package etcd3

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// etcdWatcher streams decoded events of one key or prefix straight from etcd.
type etcdWatcher struct {
	cancel context.CancelFunc
	result chan watch.Event
	once   sync.Once
}

func newEtcdWatcher(ctx context.Context, s *Store, key string, recursive bool, rev int64) *etcdWatcher {
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
				e, err := s.DecodeEvent(ev)
				if err != nil {
					status := apierrors.NewInternalError(err).Status()
					w.result <- watch.Event{Type: watch.Error, Object: &status}
					return
				}
				select {
				case w.result <- watch.Event{Type: e.Type, Object: e.Object}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return w
}

func (w *etcdWatcher) Stop()                          { w.once.Do(w.cancel) }
func (w *etcdWatcher) ResultChan() <-chan watch.Event { return w.result }
