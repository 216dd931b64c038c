package main

import (
	"math"
	"testing"
)

func TestMedianInterval(t *testing.T) {
	for _, tc := range []struct {
		n            int
		lo, hi       float64 // ranks, 1-based, of 1..n shuffled
		coverage     float64
		wantInterval bool
	}{
		{n: 5, wantInterval: false},                                    // best pair covers 93.75%
		{n: 6, lo: 1, hi: 6, coverage: 1 - 2.0/64, wantInterval: true}, // min and max
		{n: 9, lo: 2, hi: 8, coverage: 1 - 2*10.0/512, wantInterval: true},
		{n: 15, lo: 4, hi: 12, coverage: 1 - 2*576.0/32768, wantInterval: true},
		{n: 25, lo: 8, hi: 18, coverage: 0.9567, wantInterval: true},
	} {
		v := make([]float64, tc.n)
		for i := range v {
			// 1..n in a scrambled order: the function must sort.
			v[i] = float64((i*7)%tc.n + 1)
		}
		lo, hi, coverage, ok := medianInterval(v, 0.95)
		if ok != tc.wantInterval {
			t.Errorf("n=%d: ok = %v, want %v", tc.n, ok, tc.wantInterval)
			continue
		}
		if !ok {
			continue
		}
		if lo != tc.lo || hi != tc.hi || math.Abs(coverage-tc.coverage) > 1e-4 {
			t.Errorf("n=%d: interval [%v, %v] covering %.5f, want [%v, %v] covering %.5f", tc.n, lo, hi, coverage, tc.lo, tc.hi, tc.coverage)
		}
	}
}
