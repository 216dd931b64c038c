package endpointslice

import (
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// sliceVersion is what the controller last wrote of one slice.
type sliceVersion struct {
	generation      int64
	resourceVersion uint64 // 0: not a number
	deleteExpected  bool
}

// sliceTracker remembers, per Service, the slices the controller wrote
// and the version it wrote, so a sync can tell that its informer cache
// does not show its own last writes yet (upstream's EndpointSliceTracker).
//
// Upstream compares generations only. skiff also compares
// resourceVersions when both are numbers (an etcd revision, on skiff's API
// server as on upstream's): a cached slice is older than the tracked one
// when its generation is lower, or its resourceVersion is. That catches a
// stale cache even where an update does not raise the generation.
type sliceTracker struct {
	mu          sync.Mutex
	byService   map[types.NamespacedName]map[types.UID]sliceVersion
	serviceUIDs map[types.NamespacedName]types.UID
}

func newSliceTracker() *sliceTracker {
	return &sliceTracker{
		byService:   map[types.NamespacedName]map[types.UID]sliceVersion{},
		serviceUIDs: map[types.NamespacedName]types.UID{},
	}
}

func serviceNN(slice *discoveryv1.EndpointSlice) types.NamespacedName {
	return types.NamespacedName{Namespace: slice.Namespace, Name: slice.Labels[discoveryv1.LabelServiceName]}
}

func parseRV(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func versionOf(slice *discoveryv1.EndpointSlice) sliceVersion {
	return sliceVersion{generation: slice.Generation, resourceVersion: parseRV(slice.ResourceVersion)}
}

// olderThan reports whether cached is older than what was written.
func (cached sliceVersion) olderThan(written sliceVersion) bool {
	if cached.generation < written.generation {
		return true
	}
	return cached.resourceVersion != 0 && written.resourceVersion != 0 && cached.resourceVersion < written.resourceVersion
}

// Has reports whether slice is tracked.
func (t *sliceTracker) Has(slice *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.byService[serviceNN(slice)][slice.UID]
	return ok
}

// ShouldSync reports whether an informer event for slice is news to the
// controller: the slice is not tracked, is expected to be deleted, or is
// newer than what the controller wrote (someone else changed it).
func (t *sliceTracker) ShouldSync(slice *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.byService[serviceNN(slice)][slice.UID]
	if !ok || v.deleteExpected {
		return true
	}
	return v.olderThan(versionOf(slice))
}

// StaleSlices reports whether the cached slices of svc lag behind the
// controller's writes: a slice older than written, one the controller
// deleted still present, or one it wrote missing. Records of an earlier
// Service of the same name (another UID) are dropped first.
func (t *sliceTracker) StaleSlices(svc *corev1.Service, cached []*discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	nn := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	if uid, ok := t.serviceUIDs[nn]; ok && uid != "" && svc.UID != "" && uid != svc.UID {
		delete(t.byService, nn)
	}
	t.serviceUIDs[nn] = svc.UID
	written, ok := t.byService[nn]
	if !ok {
		return false
	}
	seen := make(map[types.UID]bool, len(cached))
	for _, s := range cached {
		seen[s.UID] = true
		if v, ok := written[s.UID]; ok && (v.deleteExpected || versionOf(s).olderThan(v)) {
			return true
		}
	}
	for uid, v := range written {
		if !v.deleteExpected && !seen[uid] {
			return true
		}
	}
	return false
}

// Update records the version the controller just wrote.
func (t *sliceTracker) Update(slice *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.service(slice)[slice.UID] = versionOf(slice)
}

// ExpectDeletion records that the controller deleted slice.
func (t *sliceTracker) ExpectDeletion(slice *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.service(slice)[slice.UID] = sliceVersion{deleteExpected: true}
}

// HandleDeletion forgets slice, which is gone; it returns false when the
// controller did not delete it itself.
func (t *sliceTracker) HandleDeletion(slice *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	written, ok := t.byService[serviceNN(slice)]
	if !ok {
		return true
	}
	v, ok := written[slice.UID]
	delete(written, slice.UID)
	return !ok || v.deleteExpected
}

// DeleteService forgets the Service.
func (t *sliceTracker) DeleteService(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	delete(t.byService, nn)
	delete(t.serviceUIDs, nn)
}

func (t *sliceTracker) service(slice *discoveryv1.EndpointSlice) map[types.UID]sliceVersion {
	nn := serviceNN(slice)
	m, ok := t.byService[nn]
	if !ok {
		m = map[types.UID]sliceVersion{}
		t.byService[nn] = m
	}
	return m
}
