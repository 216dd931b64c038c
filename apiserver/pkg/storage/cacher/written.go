package cacher

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// written holds the objects this server has just created through the
// cacher, by key, until the watch delivers their creation: the cache then
// keeps the object itself instead of decoding the bytes etcd sends back,
// which are its encoding (Cacher.CreateHandedOver puts them here, with Config.KeepCreated).
// An object whose event has gone by before it was put here (the watch can
// be faster than the write's own answer) is not kept: that event was
// decoded, and no later one can be its.
type written struct {
	mu   sync.Mutex
	objs map[string]writtenObject
	// seen is the revision of the last event the watch has looked up.
	seen int64
}

type writtenObject struct {
	rev int64
	obj runtime.Object
}

// put keeps obj, created at key with revision rev, for its event.
func (w *written) put(key string, rev int64, obj runtime.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rev <= w.seen {
		return
	}
	if w.objs == nil {
		w.objs = map[string]writtenObject{}
	}
	w.objs[key] = writtenObject{rev: rev, obj: obj}
}

// take is called for each event, in revision order, with its key and
// revision and whether it is a creation: the object created by that event
// if it was put here (and forgets it), else nil.
func (w *written) take(key string, rev int64, create bool) runtime.Object {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rev > w.seen {
		w.seen = rev
	}
	o, ok := w.objs[key]
	if !ok || o.rev > rev {
		// Nothing, or a later creation at the key whose event is to come.
		return nil
	}
	delete(w.objs, key)
	if !create || o.rev != rev {
		return nil
	}
	return o.obj
}

// reset forgets every object: the cache is listed again at revision rev,
// and watches from there.
func (w *written) reset(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.objs = nil
	w.seen = rev
}
