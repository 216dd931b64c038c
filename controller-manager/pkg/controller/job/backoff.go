package job

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Upstream's pod failure back-off: 10s, doubled for each failure since the
// last success, at most 6 minutes.
const (
	DefaultPodFailureBackOff = 10 * time.Second
	MaxPodFailureBackOff     = 6 * time.Minute
)

// backoffRecord is a job's failures since its last success and when the
// last of them happened.
type backoffRecord struct {
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

// backoffStore keeps each job's backoffRecord between syncs.
type backoffStore struct {
	mu      sync.Mutex
	records map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{records: map[string]backoffRecord{}} }

func (s *backoffStore) get(key string) backoffRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records[key]
}

func (s *backoffStore) set(key string, r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[key] = r
}

func (s *backoffStore) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}

// next returns key's record updated with the pods that finished since the
// last sync: a success resets the count to the failures that came after
// the last success.
func (s *backoffStore) next(key string, succeeded, failed []*corev1.Pod) backoffRecord {
	r := s.get(key)
	if len(succeeded) == 0 && len(failed) == 0 {
		return r
	}
	sortByFinishedTime(succeeded)
	sortByFinishedTime(failed)
	if len(succeeded) == 0 {
		r.failuresAfterLastSuccess += int32(len(failed))
		t := finishedTime(failed[len(failed)-1])
		r.lastFailureTime = &t
		return r
	}
	r = backoffRecord{}
	lastSuccess := finishedTime(succeeded[len(succeeded)-1])
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishedTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if r.lastFailureTime == nil {
			r.lastFailureTime = &t
		}
		r.failuresAfterLastSuccess++
	}
	return r
}

// remainingTime is how long the job must still wait before it creates a
// pod again.
func (r backoffRecord) remainingTime(clk clock.PassiveClock) time.Duration {
	return remainingTimeForFailures(clk, r.failuresAfterLastSuccess, r.lastFailureTime)
}

// remainingTimeForFailures is the back-off after failures failures, the
// last at last, still to wait at the clock's now.
func remainingTimeForFailures(clk clock.PassiveClock, failures int32, last *time.Time) time.Duration {
	if failures == 0 || last == nil {
		return 0
	}
	d := DefaultPodFailureBackOff
	for i := int32(1); i < failures; i++ {
		d *= 2
		if d >= MaxPodFailureBackOff {
			d = MaxPodFailureBackOff
			break
		}
	}
	elapsed := clk.Since(*last)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}

func sortByFinishedTime(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return finishedTime(pods[i]).Before(finishedTime(pods[j])) })
}

// finishedTime is when pod finished: its containers' last finish, else when
// it stopped being ready, else its deletion, else its creation.
func finishedTime(p *corev1.Pod) time.Time {
	var last time.Time
	for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for _, cs := range list {
			if t := cs.State.Terminated; t != nil && t.FinishedAt.Time.After(last) {
				last = t.FinishedAt.Time
			}
		}
	}
	if !last.IsZero() {
		return last
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Time
	}
	return p.CreationTimestamp.Time
}
