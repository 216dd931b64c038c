package main

import (
	"testing"
	"time"
)

func TestDelayParts(t *testing.T) {
	ms := time.Millisecond
	// Two watchers, two updates of run 0, and one event of run 1 that
	// must not count.
	recs := [][]received{
		{{run: 0, seq: 0, delay: 2 * ms}, {run: 0, seq: 1, delay: 5 * ms}, {run: 1, seq: 0, delay: 90 * ms}},
		{{run: 0, seq: 0, delay: 3 * ms}, {run: 0, seq: 1, delay: 9 * ms}},
	}
	got := delayParts(recs, 0, []time.Duration{1 * ms, 4 * ms})
	// Updates 1 and 4 ms; first watchers 2 and 5 ms; spreads 1 and 4 ms
	// (the lower of two is the p50, the higher the p99).
	want := "update request p50 1.00 ms p99 4.00 ms; first watcher p50 2.00 ms p99 5.00 ms; first to last p50 1.00 ms p99 4.00 ms"
	if got != want {
		t.Errorf("delayParts:\n got %s\nwant %s", got, want)
	}
}
