package server

import (
	"testing"
	"time"
)

func TestEmptyLookups(t *testing.T) {
	e := &emptyLookups{ttl: 10 * time.Second, at: map[collectionKey]time.Time{}}
	t0 := time.Unix(1000, 0)
	if e.fresh(emptyKey("", "limitranges", "a"), t0) {
		t.Fatal("fresh before any lookup")
	}
	e.set(emptyKey("", "limitranges", "a"), t0, true)
	tests := []struct {
		name string
		key  collectionKey
		at   time.Time
		want bool
	}{
		{"same collection within the TTL", emptyKey("", "limitranges", "a"), t0.Add(9 * time.Second), true},
		{"same collection after the TTL", emptyKey("", "limitranges", "a"), t0.Add(10 * time.Second), false},
		{"another namespace", emptyKey("", "limitranges", "b"), t0.Add(time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.fresh(tt.key, tt.at); got != tt.want {
				t.Errorf("fresh(%v) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
	// A non-empty answer forgets the entry at once.
	e.set(emptyKey("", "limitranges", "a"), t0.Add(time.Second), false)
	if e.fresh(emptyKey("", "limitranges", "a"), t0.Add(2*time.Second)) {
		t.Error("an empty answer was kept after a non-empty one")
	}
}

// TestCreatedForgetsEmptyLookup: an object this server stores makes its
// collection's remembered empty etcd answer go, so the next admission
// looks again instead of trusting it while the watch cache catches up.
func TestCreatedForgetsEmptyLookup(t *testing.T) {
	o := objects{empty: &emptyLookups{ttl: 10 * time.Second, at: map[collectionKey]time.Time{}}}
	now := time.Now()
	o.empty.set(emptyKey("", "resourcequotas", "a"), now, true)
	o.empty.set(emptyKey("", "resourcequotas", "b"), now, true)
	o.created("", "resourcequotas", "a")
	if o.empty.fresh(emptyKey("", "resourcequotas", "a"), now) {
		t.Error("namespace a's quotas still remembered as empty after one was created")
	}
	if !o.empty.fresh(emptyKey("", "resourcequotas", "b"), now) {
		t.Error("namespace b's empty answer was forgotten too")
	}
}
