package policy

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"skiff.dev/apiserver/pkg/testserver"
	cmapp "skiff.dev/controller-manager/app"
	"skiff.dev/controller-manager/test/integration/cmtest"
)

const timeout = 60 * time.Second

// startCM runs the controller manager with its own certificate
// (system:kube-controller-manager) until the test ends (cmtest.Start).
func startCM(t *testing.T, ts *testserver.TestServer, edit func(*cmapp.Options)) *cmapp.Config {
	t.Helper()
	cfg, _ := cmtest.Start(t, ts, edit)
	return cfg
}

// poll waits until cond holds, failing the test with the last state cond
// described.
func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, state, err := cond(ctx)
		last = state
		return ok, err
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last state: %s", what, err, last)
	}
}

// namespace creates ns and its default ServiceAccount, which the API
// server's ServiceAccount admission wants for every pod.
func namespace(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// setPodStatus does the kubelet's part: binds the pod to node-1 if it is
// not bound yet and reports it Running with the given readiness.
func setPodStatus(t *testing.T, c kubernetes.Interface, pod *corev1.Pod, phase corev1.PodPhase, ready bool) {
	t.Helper()
	ctx := context.Background()
	if pod.Spec.NodeName == "" {
		err := c.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("binding %s: %v", pod.Name, err)
		}
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase = phase
		cur.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: status, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: status, LastTransitionTime: now},
		}
		_, err = c.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("reporting %s %s: %v", pod.Name, phase, err)
	}
}

// metricValue is the value of the counter family whose series has all
// the given labels, or 0 when there is none.
func metricValue(t *testing.T, cfg *cmapp.Config, family string, want map[string]string) float64 {
	t.Helper()
	families, err := cfg.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(want) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
