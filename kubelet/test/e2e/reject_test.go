package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestRejectedPodRecreatedUnderItsName is what upstream's conformance test
// "Should recreate evicted statefulset" asks of a node: a pod wanting a
// host port another pod holds is refused (Failed, NodePorts), and a pod
// created again under its name (a new UID, as the StatefulSet controller
// makes ss-0 again at once) is refused again, each time with its status
// written (the API server's Node authorizer may not know the new pod yet
// when the refusal is written); a refused pod deleted is gone from the API
// at once, also when the deletion reached the API before the refusal; once
// the port is free, the pod created again runs.
func TestRejectedPodRecreatedUnderItsName(t *testing.T) {
	e := setup(t)
	k := e.startKubelet(t)
	e.makeReady(t)
	// Host ports need the privileged Pod Security level.
	e.enforcePrivileged(t)
	ctx := context.Background()
	pods := e.client.CoreV1().Pods("default")
	port := int32(20000 + rand.IntN(10000))
	withPort := func(name string) *corev1.Pod {
		p := imagePod(name, "busybox", corev1.RestartPolicyAlways, "sleep", "3600")
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "conflict", ContainerPort: port, HostPort: port}}
		// A long grace period: a deletion the kubelet does not confirm
		// would leave the pod Terminating for longer than the test waits.
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](60)
		return p
	}
	holder := e.createPod(t, withPort("holder"))
	e.waitRunning(t, "holder")

	gone := func(name string, uid types.UID) {
		t.Helper()
		poll(t, 20*time.Second, "pod "+name+" ("+string(uid)+") to be gone from the API", func() (bool, string) {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && p.UID != uid) {
				return true, ""
			}
			if err != nil {
				return false, err.Error()
			}
			return false, fmt.Sprintf("%s, deletionTimestamp %v", p.Status.Phase, p.DeletionTimestamp)
		})
	}
	refused := func(p *corev1.Pod) {
		t.Helper()
		poll(t, 20*time.Second, "pod b ("+string(p.UID)+") to be refused", func() (bool, string) {
			got, err := pods.Get(ctx, "b", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if got.UID != p.UID {
				return false, "another pod b: " + string(got.UID)
			}
			ok := got.Status.Phase == corev1.PodFailed && got.Status.Reason == "NodePorts" &&
				strings.HasPrefix(got.Status.Message, "Pod was rejected: ")
			return ok, fmt.Sprintf("%s %q %q", got.Status.Phase, got.Status.Reason, got.Status.Message)
		})
	}

	// As the StatefulSet controller does: b refused, deleted, created
	// again at once under its name, a few times.
	var prev types.UID
	for i := 0; i < 4; i++ {
		b := e.createPod(t, withPort("b"))
		if b.UID == prev {
			t.Fatalf("pod b created again with the UID %s", b.UID)
		}
		refused(b)
		if err := pods.Delete(ctx, "b", metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(b.UID))}); err != nil {
			t.Fatal(err)
		}
		gone("b", b.UID)
		prev = b.UID
	}

	// Deleted as soon as created, most likely before the kubelet refused
	// it (then still Pending: a graceful deletion the kubelet must
	// confirm once it has written the refusal).
	pendingDeletes := 0
	for i := 0; i < 3; i++ {
		b := e.createPod(t, withPort("b"))
		if err := pods.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, err := pods.Get(ctx, "b", metav1.GetOptions{}); err == nil && got.UID == b.UID && got.DeletionTimestamp != nil {
			pendingDeletes++
		}
		gone("b", b.UID)
	}
	t.Logf("%d of 3 deletions reached the API before the refusal", pendingDeletes)

	// Refused while the holder runs; then the holder goes (deleted at
	// once, as the conformance test does).
	b := e.createPod(t, withPort("b"))
	refused(b)
	if err := pods.Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	gone("holder", holder.UID)
	// The holder counts as active until its containers are stopped (as
	// upstream's kubelet counts a terminating pod).
	poll(t, 30*time.Second, "the holder to stop", func() (bool, string) {
		for _, p := range k.cfg.Kubelet.ActivePods() {
			if p.UID == holder.UID {
				return false, "still active"
			}
		}
		return true, ""
	})
	// b stays refused: a refusal is final.
	if got, err := pods.Get(ctx, "b", metav1.GetOptions{}); err != nil || got.UID != b.UID || got.Status.Phase != corev1.PodFailed {
		t.Fatalf("refused pod b after the holder went: %v %+v", err, got)
	}
	if err := pods.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone("b", b.UID)
	last := e.createPod(t, withPort("b"))
	e.waitRunning(t, "b")
	if got := e.getPod(t, "b"); got.UID != last.UID {
		t.Fatalf("pod b running is %s, want the last one created, %s", got.UID, last.UID)
	}
	if err := pods.Delete(ctx, "b", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, "pod b to be torn down", func() (bool, string) {
		left := e.podContainers(t, last.UID)
		return len(left) == 0 && k.cfg.Kubelet.PodCleanedUp(last), fmt.Sprint(left)
	})
}
