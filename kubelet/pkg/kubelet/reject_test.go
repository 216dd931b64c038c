package kubelet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"skiff.dev/kubelet/pkg/pod"
)

// forbidStatus makes the client answer the first n writes of pods/status
// (every one when n < 0) Forbidden, as the API server's Node authorizer
// does while it has not yet seen a pod just bound to the node; it counts
// the writes.
func forbidStatus(client *fake.Clientset, n int32) *atomic.Int32 {
	var calls atomic.Int32
	client.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		if c := calls.Add(1); n < 0 || c <= n {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "b", errNoRelationship)
		}
		return false, nil, nil
	})
	return &calls
}

var errNoRelationship = errors.New("no relationship found between node 'n1' and this object")

func refuseAll(*corev1.Pod) (bool, string, string) { return false, "Refused", "for the test" }

// A refusal answered Forbidden (the Node authorizer has not seen the pod
// yet: it was created a moment ago, under the name of one just deleted) is
// written again until it is in; a refused pod deleted before the kubelet
// saw its Failed status is then confirmed deleted.
func TestRejectionWrittenDespiteForbidden(t *testing.T) {
	b := admitPod("b")
	b.UID, b.Status.Phase = "ub", corev1.PodPending
	client := fake.NewSimpleClientset(b.DeepCopy())
	calls := forbidStatus(client, 3)
	k := New(Options{NodeName: "n1", Client: client, Runtime: &fakeRuntime{}, Network: &fakeNetwork{}, Lifecycle: &pod.Lifecycle{}, Admit: refuseAll})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		k.wg.Wait()
	}()
	k.update(ctx, b)
	var got *corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = client.CoreV1().Pods("ns").Get(ctx, "b", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodFailed, nil
	}); err != nil {
		t.Fatalf("the refused pod's Failed status was not written after %d attempts: %v", calls.Load(), err)
	}
	if got.Status.Reason != "Refused" || got.Status.Message != "Pod was rejected: for the test" {
		t.Errorf("status reason %q, message %q", got.Status.Reason, got.Status.Message)
	}
	if c := calls.Load(); c != 4 {
		t.Errorf("%d status writes, want 4 (3 refused, then the one made)", c)
	}

	// It was deleted (graceful: it was still Pending) before the kubelet's
	// informer brought its Failed status: nothing happens until that
	// status is seen, then the kubelet confirms the deletion.
	deleting := b.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	deleting.DeletionGracePeriodSeconds = new(int64)
	*deleting.DeletionGracePeriodSeconds = 30
	k.update(ctx, deleting)
	k.mu.Lock()
	_, started := k.workers[b.UID]
	k.mu.Unlock()
	if started {
		t.Fatal("a refused pod got a worker before its Failed status was seen")
	}
	failed := deleting.DeepCopy()
	failed.Status = got.Status
	k.update(ctx, failed)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Pods("ns").Get(ctx, "b", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("the deletion of the refused pod was not confirmed: %v", err)
	}
}

// The writing of a refusal stops once the pod is gone (the informer's
// delete), even while the API still answers Forbidden.
func TestRejectionWriteStopsWhenPodIsGone(t *testing.T) {
	b := admitPod("b")
	b.UID, b.Status.Phase = "ub", corev1.PodPending
	client := fake.NewSimpleClientset(b.DeepCopy())
	calls := forbidStatus(client, -1)
	k := New(Options{NodeName: "n1", Client: client, Runtime: &fakeRuntime{}, Network: &fakeNetwork{}, Lifecycle: &pod.Lifecycle{}, Admit: refuseAll})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k.update(ctx, b)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return calls.Load() >= 2, nil
	}); err != nil {
		t.Fatalf("the refusal was not written again after Forbidden: %d attempts", calls.Load())
	}
	k.remove(b)
	done := make(chan struct{})
	go func() {
		k.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(rejectionRetryCap + 5*time.Second):
		t.Fatalf("the refusal's writer still runs after the pod was deleted (%d attempts)", calls.Load())
	}
	k.mu.Lock()
	left := len(k.rejected)
	k.mu.Unlock()
	if left != 0 {
		t.Errorf("%d refusals remembered after the pod was deleted", left)
	}
}

// graceRecorder records the grace period each teardown of a pod is given.
type graceRecorder struct{ graces chan time.Duration }

func (graceRecorder) Name() string { return "grace-recorder" }
func (g graceRecorder) Destroy(_ context.Context, s *pod.State) error {
	g.graces <- s.GracePeriod
	return nil
}

// A pod the API removed before the kubelet confirmed (deleted with grace
// period 0, as the conformance test removes the pod holding the host port)
// is torn down with no grace period, not its spec's: upstream's API server
// records 0 on such a pod, and nothing waits for it any longer.
func TestRemovedPodTornDownWithoutGrace(t *testing.T) {
	p := admitPod("holder", withHostPort(80, ""))
	p.UID, p.Status.Phase = "uh", corev1.PodPending
	p.Spec.TerminationGracePeriodSeconds = new(int64)
	*p.Spec.TerminationGracePeriodSeconds = 60
	client := fake.NewSimpleClientset(p.DeepCopy())
	rec := graceRecorder{graces: make(chan time.Duration, 4)}
	k := New(Options{NodeName: "n1", Client: client, Runtime: &fakeRuntime{}, Network: &fakeNetwork{}, Lifecycle: &pod.Lifecycle{Hooks: []pod.Hook{notReady{}, rec}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		k.wg.Wait()
	}()
	k.update(ctx, p)
	if active := k.ActivePods(); len(active) != 1 {
		t.Fatalf("%d active pods, want the holder", len(active))
	}
	k.remove(p)
	select {
	case g := <-rec.graces:
		if g != 0 {
			t.Errorf("the removed pod was torn down with a grace period of %v, want 0", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the removed pod was not torn down")
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(k.ActivePods()) == 0, nil
	}); err != nil {
		t.Fatal("the removed pod is still active")
	}
}
