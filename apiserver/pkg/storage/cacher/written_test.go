package cacher

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// size is the number of objects waiting for their event.
func (w *written) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.objs)
}

func obj(name string) runtime.Object { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}} }

// TestWritten: an object kept for its creation is taken by that event
// alone; one whose event went by first is not kept; a relist forgets all.
func TestWritten(t *testing.T) {
	var w written
	a, b := obj("a"), obj("b")
	w.put("/a", 10, a)
	w.put("/b", 11, b)
	if got := w.take("/a", 9, false); got != nil {
		t.Errorf("an earlier event at the key took the object: %v", got)
	}
	if got := w.take("/a", 10, true); got != a {
		t.Errorf("the creation at revision 10 got %v, want the kept object", got)
	}
	if got := w.take("/a", 10, true); got != nil {
		t.Error("the object was taken twice")
	}
	// An update at /b's revision is not /b's creation: nothing, and /b is
	// forgotten, as no later event can be its creation.
	if got := w.take("/b", 11, false); got != nil {
		t.Errorf("an update took the object: %v", got)
	}
	if w.size() != 0 {
		t.Errorf("%d objects left, want none", w.size())
	}

	// The watch was faster than the create's answer: revision 12 has gone
	// by when its object comes; it is not kept (it was decoded).
	if got := w.take("/c", 12, true); got != nil {
		t.Errorf("got %v for a key nobody created", got)
	}
	w.put("/c", 12, obj("c"))
	if w.size() != 0 {
		t.Error("an object whose event has gone by was kept")
	}

	// Deleted and created again: the first creation's object was never
	// taken (its event went by first); the later one waits for its own.
	d := obj("d")
	w.put("/d", 20, d)
	if got := w.take("/d", 15, true); got != nil {
		t.Errorf("an earlier creation at the key took the later object: %v", got)
	}
	if got := w.take("/d", 20, true); got != d {
		t.Errorf("got %v, want the object created at revision 20", got)
	}

	// A relist at revision 30 forgets what waits and anything older.
	w.put("/e", 25, obj("e"))
	w.reset(30)
	if w.size() != 0 {
		t.Error("a relist kept objects")
	}
	w.put("/f", 29, obj("f"))
	if w.size() != 0 {
		t.Error("an object older than the relist was kept")
	}
}
