package queue

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Defaults as upstream's.
const (
	DefaultInitialBackoff          = time.Second
	DefaultMaxBackoff              = 10 * time.Second
	DefaultMaxUnschedulableStay    = 5 * time.Minute
	flushBackoffPeriod             = time.Second
	flushUnschedulableLeftoverTick = 30 * time.Second
)

// ErrClosed is returned by Pop after Close.
var ErrClosed = errors.New("scheduling queue is closed")

// QueuedPodInfo is a pod in the queue with its scheduling history.
type QueuedPodInfo struct {
	Pod *corev1.Pod
	// Timestamp is when the pod was last added to a sub-queue.
	Timestamp time.Time
	// InitialAttemptTimestamp is when the pod was first popped.
	InitialAttemptTimestamp time.Time
	// Attempts counts the scheduling attempts.
	Attempts int
}

func (p *QueuedPodInfo) key() string { return p.Pod.Namespace + "/" + p.Pod.Name }

func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// lessActive orders by priority, higher first, then by when the pod was
// queued, older first (upstream's PrioritySort).
func lessActive(a, b *QueuedPodInfo) bool {
	pa, pb := podPriority(a.Pod), podPriority(b.Pod)
	if pa != pb {
		return pa > pb
	}
	return a.Timestamp.Before(b.Timestamp)
}

// Gauges receives the sub-queue lengths after each change.
type Gauges func(active, backoff, unschedulable int)

// Queue is the scheduling queue; safe for concurrent use.
type Queue struct {
	mu   sync.Mutex
	cond *sync.Cond
	now  func() time.Time

	initialBackoff, maxBackoff, maxUnschedulableStay time.Duration

	active        *keyedHeap
	backoff       *keyedHeap
	unschedulable map[string]*QueuedPodInfo
	// inFlight holds the pods popped and not yet done.
	inFlight map[string]bool

	schedulingCycle  int64
	moveRequestCycle int64
	closed           bool
	gauges           Gauges
}

// Option configures a Queue.
type Option func(*Queue)

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(q *Queue) { q.now = now } }

// WithBackoff sets the initial and maximum back-off.
func WithBackoff(initial, max time.Duration) Option {
	return func(q *Queue) { q.initialBackoff, q.maxBackoff = initial, max }
}

// WithGauges reports the sub-queue lengths.
func WithGauges(g Gauges) Option { return func(q *Queue) { q.gauges = g } }

// New returns an empty queue.
func New(opts ...Option) *Queue {
	q := &Queue{
		now:                  time.Now,
		initialBackoff:       DefaultInitialBackoff,
		maxBackoff:           DefaultMaxBackoff,
		maxUnschedulableStay: DefaultMaxUnschedulableStay,
		unschedulable:        map[string]*QueuedPodInfo{},
		inFlight:             map[string]bool{},
	}
	q.active = newHeap(lessActive)
	q.backoff = newHeap(func(a, b *QueuedPodInfo) bool { return q.backoffExpiry(a).Before(q.backoffExpiry(b)) })
	q.cond = sync.NewCond(&q.mu)
	for _, o := range opts {
		o(q)
	}
	return q
}

func (q *Queue) backoffDuration(p *QueuedPodInfo) time.Duration {
	d := q.initialBackoff
	for i := 1; i < p.Attempts; i++ {
		if d > q.maxBackoff-d {
			return q.maxBackoff
		}
		d += d
	}
	if d > q.maxBackoff {
		return q.maxBackoff
	}
	return d
}

func (q *Queue) backoffExpiry(p *QueuedPodInfo) time.Time {
	return p.Timestamp.Add(q.backoffDuration(p))
}

func (q *Queue) isBackingOff(p *QueuedPodInfo) bool {
	return p.Attempts > 0 && q.backoffExpiry(p).After(q.now())
}

func (q *Queue) report() {
	if q.gauges != nil {
		q.gauges(q.active.Len(), q.backoff.Len(), len(q.unschedulable))
	}
}

// Add queues a new pending pod.
func (q *Queue) Add(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := &QueuedPodInfo{Pod: pod, Timestamp: q.now()}
	q.backoff.delete(p.key())
	delete(q.unschedulable, p.key())
	q.active.addOrUpdate(p)
	q.report()
	q.cond.Broadcast()
}

// Update replaces a queued pod; an unschedulable pod whose spec, labels or
// annotations changed is given another chance.
func (q *Queue) Update(oldPod, newPod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := newPod.Namespace + "/" + newPod.Name
	if p, ok := q.active.get(key); ok {
		p.Pod = newPod
		q.active.addOrUpdate(p)
		return
	}
	if p, ok := q.backoff.get(key); ok {
		p.Pod = newPod
		q.backoff.addOrUpdate(p)
		return
	}
	if p, ok := q.unschedulable[key]; ok {
		p.Pod = newPod
		if oldPod != nil && !equality.Semantic.DeepEqual(oldPod.Spec, newPod.Spec) ||
			oldPod != nil && !equality.Semantic.DeepEqual(oldPod.Labels, newPod.Labels) ||
			oldPod != nil && !equality.Semantic.DeepEqual(oldPod.Annotations, newPod.Annotations) {
			delete(q.unschedulable, key)
			if q.isBackingOff(p) {
				q.backoff.addOrUpdate(p)
			} else {
				q.active.addOrUpdate(p)
				q.cond.Broadcast()
			}
			q.report()
		}
		return
	}
	if q.inFlight[key] {
		return
	}
	// Not queued and not being scheduled: a new pending pod.
	q.active.addOrUpdate(&QueuedPodInfo{Pod: newPod, Timestamp: q.now()})
	q.report()
	q.cond.Broadcast()
}

// Delete removes a pod from every sub-queue.
func (q *Queue) Delete(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := pod.Namespace + "/" + pod.Name
	q.active.delete(key)
	q.backoff.delete(key)
	delete(q.unschedulable, key)
	q.report()
}

// Pop blocks until a pod is active and returns it, or ErrClosed.
func (q *Queue) Pop() (*QueuedPodInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.active.Len() == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, ErrClosed
	}
	p := q.active.pop()
	p.Attempts++
	if p.InitialAttemptTimestamp.IsZero() {
		p.InitialAttemptTimestamp = q.now()
	}
	q.schedulingCycle++
	q.inFlight[p.key()] = true
	q.report()
	return p, nil
}

// SchedulingCycle is the number of pods popped so far.
func (q *Queue) SchedulingCycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.schedulingCycle
}

// Done marks a popped pod as no longer being scheduled.
func (q *Queue) Done(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.inFlight, pod.Namespace+"/"+pod.Name)
}

// AddUnschedulableIfNotPresent puts back a pod whose attempt in cycle
// failed. unschedulable is false for errors, which always back off. If
// the cluster changed since the attempt started, the pod backs off
// instead of waiting for the next change.
func (q *Queue) AddUnschedulableIfNotPresent(p *QueuedPodInfo, unschedulable bool, cycle int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := p.key()
	delete(q.inFlight, key)
	if _, ok := q.active.get(key); ok {
		return
	}
	if _, ok := q.backoff.get(key); ok {
		return
	}
	if _, ok := q.unschedulable[key]; ok {
		return
	}
	p.Timestamp = q.now()
	if !unschedulable || q.moveRequestCycle >= cycle {
		q.backoff.addOrUpdate(p)
	} else {
		q.unschedulable[key] = p
	}
	q.report()
}

// MoveAllToActiveOrBackoffQueue gives every unschedulable pod another
// chance after a cluster event.
func (q *Queue) MoveAllToActiveOrBackoffQueue() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.moveAllLocked(func(*QueuedPodInfo) bool { return true })
	q.moveRequestCycle = q.schedulingCycle
}

// MoveToActiveOrBackoffQueueIf moves the unschedulable pods for which
// pred holds, as MoveAllToActiveOrBackoffQueue does.
func (q *Queue) MoveToActiveOrBackoffQueueIf(pred func(*corev1.Pod) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.unschedulable) == 0 {
		return
	}
	q.moveAllLocked(func(p *QueuedPodInfo) bool { return pred(p.Pod) })
	q.moveRequestCycle = q.schedulingCycle
}

func (q *Queue) moveAllLocked(pred func(*QueuedPodInfo) bool) {
	moved := false
	for key, p := range q.unschedulable {
		if !pred(p) {
			continue
		}
		delete(q.unschedulable, key)
		if q.isBackingOff(p) {
			q.backoff.addOrUpdate(p)
		} else {
			q.active.addOrUpdate(p)
			moved = true
		}
	}
	if moved {
		q.cond.Broadcast()
	}
	q.report()
}

// flushBackoffCompleted moves pods whose back-off ended to activeQ.
func (q *Queue) flushBackoffCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	moved := false
	for {
		p := q.backoff.peek()
		if p == nil || q.isBackingOff(p) {
			break
		}
		q.backoff.pop()
		q.active.addOrUpdate(p)
		moved = true
	}
	if moved {
		q.report()
		q.cond.Broadcast()
	}
}

// flushUnschedulableLeftover moves pods that waited too long.
func (q *Queue) flushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	q.moveAllLocked(func(p *QueuedPodInfo) bool { return now.Sub(p.Timestamp) > q.maxUnschedulableStay })
}

// Run flushes the back-off and unschedulable sub-queues until ctx ends,
// then closes the queue.
func (q *Queue) Run(ctx context.Context) {
	backoff := time.NewTicker(flushBackoffPeriod)
	leftover := time.NewTicker(flushUnschedulableLeftoverTick)
	defer backoff.Stop()
	defer leftover.Stop()
	for {
		select {
		case <-ctx.Done():
			q.Close()
			return
		case <-backoff.C:
			q.flushBackoffCompleted()
		case <-leftover.C:
			q.flushUnschedulableLeftover()
		}
	}
}

// Close wakes Pop, which returns ErrClosed from then on.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Lengths returns the sizes of activeQ, backoffQ and unschedulablePods.
func (q *Queue) Lengths() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active.Len(), q.backoff.Len(), len(q.unschedulable)
}
