package endpointslice

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

// TriggerTimeTracker computes the endpoints.kubernetes.io/last-change-trigger-time
// annotation as upstream's tracker of the same name: the time of the
// earliest pod or Service change that this sync is the first to see. A
// pod's change time is its Ready condition's lastTransitionTime, a
// Service's its creationTimestamp; a Service seen for the first time gives
// its creation time. A zero result means no annotation.
//
// As upstream's, it can miss a change when an object changes more than
// once between two syncs of its Service. Calls for the same Service must
// not run concurrently (the work queue guarantees it).
type TriggerTimeTracker struct {
	mu     sync.Mutex
	states map[string]triggerState
}

type triggerState struct {
	service time.Time
	pods    map[string]time.Time
}

// NewTriggerTimeTracker returns an empty tracker.
func NewTriggerTimeTracker() *TriggerTimeTracker {
	return &TriggerTimeTracker{states: map[string]triggerState{}}
}

// Compute records the trigger times of svc and its pods and returns the
// annotation's time for this sync.
func (t *TriggerTimeTracker) Compute(svc *corev1.Service, pods []*corev1.Pod) time.Time {
	key := svc.Namespace + "/" + svc.Name
	t.mu.Lock()
	state, known := t.states[key]
	t.mu.Unlock()

	var earliest time.Time
	earlier := func(ts time.Time) {
		if earliest.IsZero() || ts.Before(earliest) {
			earliest = ts
		}
	}
	podTimes := make(map[string]time.Time, len(pods))
	for _, pod := range pods {
		c := controllerutil.GetPodReadyCondition(pod)
		if c == nil || c.LastTransitionTime.IsZero() {
			continue
		}
		ts := c.LastTransitionTime.Time
		podTimes[pod.Name] = ts
		if ts.After(state.pods[pod.Name]) {
			earlier(ts)
		}
	}
	svcTime := svc.CreationTimestamp.Time
	if svcTime.After(state.service) {
		earlier(svcTime)
	}

	t.mu.Lock()
	t.states[key] = triggerState{service: svcTime, pods: podTimes}
	t.mu.Unlock()
	if !known {
		return svcTime
	}
	return earliest
}

// DeleteService forgets the Service keyed namespace/name.
func (t *TriggerTimeTracker) DeleteService(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.states, namespace+"/"+name)
}
