package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAdmissionNamespaceLifecycleAndTolerations(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	_, err := c.CoreV1().ConfigMaps("nowhere").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespaces "nowhere" not found`) {
		t.Errorf("create in a missing namespace: %v, want 404 naming the namespace", err)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "leaving"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A namespace created a moment ago is usable at once.
	if _, err := c.CoreV1().ConfigMaps("leaving").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create in a new namespace: %v", err)
	}
	if err := c.CoreV1().Namespaces().Delete(ctx(t), "leaving", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = waitFor(t, func() error {
		_, err := c.CoreV1().ConfigMaps("leaving").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "because it is being terminated") {
			return nil
		}
		return &missing{"forbidden create in a terminating namespace, got " + errString(err)}
	})
	if err != nil {
		t.Error(err)
	}
	if err := c.CoreV1().Namespaces().Delete(ctx(t), "kube-system", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting kube-system: %v, want 403", err)
	}

	pod, err := c.CoreV1().Pods("default").Create(ctx(t), testPod("tolerant", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, tol := range pod.Spec.Tolerations {
		if tol.TolerationSeconds != nil && tol.Effect == corev1.TaintEffectNoExecute {
			got[tol.Key] = *tol.TolerationSeconds
		}
	}
	if got[corev1.TaintNodeNotReady] != 300 || got[corev1.TaintNodeUnreachable] != 300 {
		t.Errorf("default tolerations = %+v", pod.Spec.Tolerations)
	}
}

func errString(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}

func TestAdmissionPodSecurity(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	priv := testPod("priv", "")
	priv.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptrTo(true)}
	priv.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}}}
	_, err := c.CoreV1().Pods("default").Create(ctx(t), priv, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "baseline:latest"`) ||
		!strings.Contains(err.Error(), "privileged") || !strings.Contains(err.Error(), "hostPath") {
		t.Fatalf("privileged pod with hostPath: %v, want 403 naming both", err)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "system-pods",
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods("system-pods").Create(ctx(t), priv, metav1.CreateOptions{}); err != nil {
		t.Errorf("privileged pod where the namespace allows it: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
