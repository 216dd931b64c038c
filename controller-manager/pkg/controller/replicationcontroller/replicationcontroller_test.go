package replicationcontroller

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"skiff.dev/controller-manager/pkg/controller/replicaset"
)

func newRC(name string, replicas int32, selector map[string]string) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), Generation: 2},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To(replicas),
			Selector: selector,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

// run starts the controller over objs and returns the client and the
// recorder (events name their object's kind).
func run(t *testing.T, objs ...runtime.Object) (*fake.Clientset, *record.FakeRecorder) {
	t.Helper()
	client := fake.NewSimpleClientset(objs...)
	var n atomic.Int64
	client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		p := action.(core.CreateAction).GetObject().(*corev1.Pod)
		p.Name = fmt.Sprintf("%s%05d", p.GenerateName, n.Add(1))
		return false, nil, nil
	})
	// The fake's UpdateStatus replaces the whole object, so a status
	// written from a stale copy would undo the test's spec change. Serve
	// the status subresource as the API server does: only the status moves.
	client.PrependReactor("update", "replicationcontrollers", func(action core.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "status" {
			return false, nil, nil
		}
		rc := action.(core.UpdateAction).GetObject().(*corev1.ReplicationController)
		stored, err := client.Tracker().Get(action.GetResource(), rc.Namespace, rc.Name)
		if err != nil {
			return true, nil, err
		}
		merged := stored.(*corev1.ReplicationController).DeepCopy()
		merged.Status = rc.Status
		if err := client.Tracker().Update(action.GetResource(), merged, rc.Namespace); err != nil {
			return true, nil, err
		}
		return true, merged, nil
	})
	rec := record.NewFakeRecorder(100)
	rec.IncludeObject = true
	factory := informers.NewSharedInformerFactory(client, 0)
	c := NewController(client, factory.Core().V1().ReplicationControllers(), factory.Core().V1().Pods(), rec, nil, replicaset.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 1) }()
	t.Cleanup(func() {
		cancel()
		<-done
		factory.Shutdown()
	})
	return client, rec
}

func poll(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last: %s", what, err, last)
	}
}

func TestKeepsReplicas(t *testing.T) {
	rc := newRC("web", 3, map[string]string{"app": "web"})
	client, rec := run(t, rc)
	ctx := context.Background()
	poll(t, "3 pods and the status", func() (bool, string) {
		pods, _ := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		got, _ := client.CoreV1().ReplicationControllers("default").Get(ctx, "web", metav1.GetOptions{})
		return len(pods.Items) == 3 && got.Status.Replicas == 3 && got.Status.ObservedGeneration == 2,
			fmt.Sprintf("%d pods, status %+v", len(pods.Items), got.Status)
	})
	pods, _ := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.Kind != "ReplicationController" || ref.APIVersion != "v1" || ref.UID != rc.UID || !strings.HasPrefix(p.Name, "web-") {
			t.Errorf("pod %s: controller %+v", p.Name, ref)
		}
	}
	ev := <-rec.Events
	if !strings.HasPrefix(ev, "Normal SuccessfulCreate Created pod: web-") || !strings.Contains(ev, "kind=ReplicationController") {
		t.Errorf("event = %q", ev)
	}
	// A deleted pod is replaced.
	if err := client.CoreV1().Pods("default").Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "a replacement", func() (bool, string) {
		l, _ := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		for _, p := range l.Items {
			if p.Name == pods.Items[0].Name {
				return false, "old pod still listed"
			}
		}
		return len(l.Items) == 3, fmt.Sprintf("%d pods", len(l.Items))
	})
	// Scaled to 1: two pods go.
	cur, _ := client.CoreV1().ReplicationControllers("default").Get(ctx, "web", metav1.GetOptions{})
	cur.Spec.Replicas = ptr.To[int32](1)
	if _, err := client.CoreV1().ReplicationControllers("default").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "1 pod", func() (bool, string) {
		l, _ := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		return len(l.Items) == 1, fmt.Sprintf("%d pods", len(l.Items))
	})
}

func TestEmptySelectorGetsAnEvent(t *testing.T) {
	rc := newRC("bad", 1, nil)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default", Labels: map[string]string{"x": "y"}}}
	client, rec := run(t, rc, orphan, newRC("good", 1, map[string]string{"app": "good"}))
	var ev string
	select {
	case ev = <-rec.Events:
	case <-time.After(10 * time.Second):
	}
	poll(t, "the good RC's pod", func() (bool, string) {
		l, _ := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=good"})
		return len(l.Items) == 1, fmt.Sprintf("%d pods", len(l.Items))
	})
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" {
			t.Errorf("adopted with an empty selector: %v", a)
		}
	}
	events := []string{ev}
	for len(rec.Events) > 0 {
		events = append(events, <-rec.Events)
	}
	found := false
	for _, e := range events {
		found = found || strings.HasPrefix(e, "Warning InvalidSelector")
	}
	if !found {
		t.Errorf("events = %v", events)
	}
}

func TestConversionRoundTrip(t *testing.T) {
	rc := newRC("web", 2, map[string]string{"app": "web"})
	rc.Spec.MinReadySeconds = 5
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 2,
		Conditions: []corev1.ReplicationControllerCondition{{Type: corev1.ReplicationControllerReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "quota"}}}
	rs := toReplicaSet(rc)
	if rs.Spec.Selector.MatchLabels["app"] != "web" || *rs.Spec.Replicas != 2 || rs.Status.Conditions[0].Type != "ReplicaFailure" {
		t.Errorf("replica set = %+v", rs)
	}
	if back := toReplicationController(rs); !reflect.DeepEqual(back, rc) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, rc)
	}
}
