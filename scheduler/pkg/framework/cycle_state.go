package framework

import (
	"fmt"
	"sync"
)

// StateKey names a piece of per-cycle state.
type StateKey string

// CycleState carries data between the extension points of one scheduling
// cycle (for example what a PreFilter computed for the Filters).
type CycleState struct {
	mu   sync.RWMutex
	data map[StateKey]any
	// The plugins whose PreFilter or PreScore returned Skip.
	skipFilters, skipScores map[string]bool
}

// The skip sets are written by the framework in PreFilter and PreScore and
// read afterwards by the same goroutine, so they take no lock (Filter runs
// per node and must stay cheap).

func (c *CycleState) skipFilter(name string) {
	if c.skipFilters == nil {
		c.skipFilters = map[string]bool{}
	}
	c.skipFilters[name] = true
}

func (c *CycleState) filterSkipped(name string) bool { return c.skipFilters[name] }

func (c *CycleState) skipScore(name string) {
	if c.skipScores == nil {
		c.skipScores = map[string]bool{}
	}
	c.skipScores[name] = true
}

func (c *CycleState) scoreSkipped(name string) bool { return c.skipScores[name] }

// NewCycleState returns an empty state.
func NewCycleState() *CycleState { return &CycleState{data: map[StateKey]any{}} }

// Write stores a value.
func (c *CycleState) Write(key StateKey, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.data[key] = v
}

// Read returns a value or an error when it is missing.
func (c *CycleState) Read(key StateKey) (any, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.data[key]
	if !ok {
		return nil, fmt.Errorf("%q not found in the cycle state", key)
	}
	return v, nil
}

// Cloner is implemented by state values that a plugin changes after
// PreFilter (through AddPod and RemovePod); Clone copies them deeply.
type Cloner interface {
	Clone() any
}

// Clone copies the state for a what-if evaluation (preemption); values
// that are Cloners are copied, the rest are shared and must be read-only.
func (c *CycleState) Clone() *CycleState {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := NewCycleState()
	for k, v := range c.data {
		if cl, ok := v.(Cloner); ok {
			v = cl.Clone()
		}
		out.data[k] = v
	}
	copyBools := func(m map[string]bool) map[string]bool {
		if m == nil {
			return nil
		}
		o := make(map[string]bool, len(m))
		for k, v := range m {
			o[k] = v
		}
		return o
	}
	out.skipFilters, out.skipScores = copyBools(c.skipFilters), copyBools(c.skipScores)
	return out
}
