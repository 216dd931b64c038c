package controllerutil

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ExpectationsTimeout is how long a controller waits for the creations and
// deletions it expects before it acts again regardless (upstream's value):
// a watch event that never arrives must not block a controller forever.
const ExpectationsTimeout = 5 * time.Minute

// Expectations record, per controller key, the pod creations and deletions
// a controller has asked for and not yet seen in its informer. A sync that
// finds them unsatisfied does not create or delete pods, because its cache
// does not show the effect of its own last actions yet.
//
// Creations are counted (a created pod's name is only known once it
// exists); deletions are tracked by pod key ("namespace/name"), so a
// deletion seen twice (a graceful delete's update, then its removal) is
// counted once.
type Expectations struct {
	mu      sync.Mutex
	clock   clock.PassiveClock
	timeout time.Duration
	records map[string]*expectation
}

type expectation struct {
	adds      int
	deletes   map[string]struct{}
	timestamp time.Time
}

// NewExpectations returns empty expectations timed by clk (nil: the real
// clock).
func NewExpectations(clk clock.PassiveClock) *Expectations {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Expectations{clock: clk, timeout: ExpectationsTimeout, records: map[string]*expectation{}}
}

// Satisfied reports whether the controller keyed key may act: it has no
// pending expectations, or they are older than ExpectationsTimeout.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.records[key]
	if !ok {
		return true
	}
	if r.adds <= 0 && len(r.deletes) == 0 {
		return true
	}
	return e.clock.Since(r.timestamp) > e.timeout
}

// ExpectCreations replaces key's expectations with n creations.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records[key] = &expectation{adds: n, timestamp: e.clock.Now()}
}

// ExpectDeletions replaces key's expectations with the deletion of the pods
// whose keys are podKeys.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &expectation{deletes: make(map[string]struct{}, len(podKeys)), timestamp: e.clock.Now()}
	for _, k := range podKeys {
		r.deletes[k] = struct{}{}
	}
	e.records[key] = r
}

// SetExpectations replaces key's expectations with n creations and the
// deletion of the pods whose keys are podKeys, for controllers that create
// and delete in the same sync (upstream's SetExpectations).
func (e *Expectations) SetExpectations(key string, n int, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &expectation{adds: n, deletes: make(map[string]struct{}, len(podKeys)), timestamp: e.clock.Now()}
	for _, k := range podKeys {
		r.deletes[k] = struct{}{}
	}
	e.records[key] = r
}

// CreationObserved records that one expected creation was seen, or, after
// a failed create, that it will never be.
func (e *Expectations) CreationObserved(key string) {
	e.CreationsSkipped(key, 1)
}

// CreationsSkipped lowers key's expected creations by n: creations the
// controller did not issue after all (a failed slow-start batch).
func (e *Expectations) CreationsSkipped(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.records[key]; ok && r.adds > 0 {
		r.adds = max(0, r.adds-n)
	}
}

// DeletionObserved records that the pod keyed podKey is gone (or being
// deleted), or, after a failed delete, that it will not be.
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.records[key]; ok {
		delete(r.deletes, podKey)
	}
}

// Delete forgets key's expectations (its controller was deleted).
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.records, key)
}

// Pending returns the creations and deletions key still expects (tests,
// logs).
func (e *Expectations) Pending(key string) (adds, deletes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.records[key]; ok {
		return r.adds, len(r.deletes)
	}
	return 0, 0
}
