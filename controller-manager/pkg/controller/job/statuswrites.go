package job

import (
	"strconv"
	"sync"
)

// statusWrites remember, per job key, the resourceVersion of the
// controller's last status write, so a sync never starts from a cached Job
// older than that write. Counting from such a Job would miss the pods the
// write counted (their finalizers are gone) and create their replacements
// again: upstream's issue 130103, fixed after v1.32 by making the controller
// read its own writes.
//
// skiff's resourceVersions are etcd revisions, so they are compared as
// numbers; one that is not a number disables the check for that write.
type statusWrites struct {
	mu  sync.Mutex
	rvs map[string]uint64
}

func newStatusWrites() *statusWrites { return &statusWrites{rvs: map[string]uint64{}} }

// wrote records the resourceVersion of a status write of key.
func (s *statusWrites) wrote(key, resourceVersion string) {
	rv, err := strconv.ParseUint(resourceVersion, 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.rvs, key)
		return
	}
	s.rvs[key] = rv
}

// seen reports whether a cached Job of key at resourceVersion includes the
// last status write; once it does, the record is dropped.
func (s *statusWrites) seen(key, resourceVersion string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	want, ok := s.rvs[key]
	if !ok {
		return true
	}
	rv, err := strconv.ParseUint(resourceVersion, 10, 64)
	if err != nil || rv >= want {
		delete(s.rvs, key)
		return true
	}
	return false
}

func (s *statusWrites) delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rvs, key)
}
