package job

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// hasTrackingFinalizer reports whether pod still holds the finalizer that
// keeps it until its job has counted it.
func hasTrackingFinalizer(pod *corev1.Pod) bool {
	return slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer)
}

// removeFinalizerPatch removes the tracking finalizer (strategic merge).
var removeFinalizerPatch = func() []byte {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer},
	}})
	return b
}()

// addFinalizerPatch adds the tracking finalizer (finalizers merge).
var addFinalizerPatch = func() []byte {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": []string{batchv1.JobTrackingFinalizer}}})
	return b
}()

func (c *Controller) removeFinalizer(ctx context.Context, pod *corev1.Pod) error {
	_, err := c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, removeFinalizerPatch, metav1.PatchOptions{})
	return err
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// finalizerExpectations are, per job key, the UIDs of the pods whose
// finalizer the controller removed and whose update it has not seen yet:
// a sync must not count those pods again from a stale cache.
type finalizerExpectations struct {
	mu   sync.Mutex
	uids map[string]map[types.UID]bool
}

func newFinalizerExpectations() *finalizerExpectations {
	return &finalizerExpectations{uids: map[string]map[types.UID]bool{}}
}

func (e *finalizerExpectations) expect(key string, uids []types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	set := e.uids[key]
	if set == nil {
		set = map[types.UID]bool{}
		e.uids[key] = set
	}
	for _, u := range uids {
		set[u] = true
	}
}

func (e *finalizerExpectations) observed(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if set := e.uids[key]; set != nil {
		delete(set, uid)
		if len(set) == 0 {
			delete(e.uids, key)
		}
	}
}

// expected returns a copy of key's expected UIDs.
func (e *finalizerExpectations) expected(key string) map[types.UID]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[types.UID]bool, len(e.uids[key]))
	for u := range e.uids[key] {
		out[u] = true
	}
	return out
}

func (e *finalizerExpectations) delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.uids, key)
}
