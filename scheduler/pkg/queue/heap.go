package queue

import "container/heap"

// keyedHeap is a heap of *QueuedPodInfo that can find and remove by key.
type keyedHeap struct {
	items []*QueuedPodInfo
	index map[string]int
	less  func(a, b *QueuedPodInfo) bool
}

func newHeap(less func(a, b *QueuedPodInfo) bool) *keyedHeap {
	return &keyedHeap{index: map[string]int{}, less: less}
}

// heap.Interface
func (h *keyedHeap) Len() int           { return len(h.items) }
func (h *keyedHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *keyedHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].key()] = i
	h.index[h.items[j].key()] = j
}
func (h *keyedHeap) Push(x any) {
	p := x.(*QueuedPodInfo)
	h.index[p.key()] = len(h.items)
	h.items = append(h.items, p)
}
func (h *keyedHeap) Pop() any {
	n := len(h.items)
	p := h.items[n-1]
	h.items = h.items[:n-1]
	delete(h.index, p.key())
	return p
}

func (h *keyedHeap) get(key string) (*QueuedPodInfo, bool) {
	i, ok := h.index[key]
	if !ok {
		return nil, false
	}
	return h.items[i], true
}

// addOrUpdate inserts p or replaces the item with its key.
func (h *keyedHeap) addOrUpdate(p *QueuedPodInfo) {
	if i, ok := h.index[p.key()]; ok {
		h.items[i] = p
		heap.Fix(h, i)
		return
	}
	heap.Push(h, p)
}

func (h *keyedHeap) delete(key string) bool {
	i, ok := h.index[key]
	if !ok {
		return false
	}
	heap.Remove(h, i)
	return true
}

func (h *keyedHeap) peek() *QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *keyedHeap) pop() *QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return heap.Pop(h).(*QueuedPodInfo)
}
