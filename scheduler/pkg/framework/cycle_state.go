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
}

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
