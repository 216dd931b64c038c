package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/server"
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

// TestAdmissionPodSecurityRestricted: a pod with no seccomp profile,
// runAsNonRoot unset and no drop: ALL is refused where the namespace
// enforces restricted, with upstream's message; admitted with a Warning
// header where it warns; admitted with an audit annotation where it audits.
func TestAdmissionPodSecurityRestricted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	ts := start(t, func(o *server.Options) { o.AuditLogPath = path })
	cfg := rest.CopyConfig(ts.AdminConfig)
	w := &warnings{}
	cfg.WarningHandler = w
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for mode, ns := range map[string]string{"enforce": "psa-enforce", "warn": "psa-warn", "audit": "psa-audit"} {
		if _, err := c.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{"pod-security.kubernetes.io/" + mode: "restricted"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	violations := `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	_, err = c.CoreV1().Pods("psa-enforce").Create(ctx(t), testPod("plain", ""), metav1.CreateOptions{})
	if want := `pods "plain" is forbidden: violates PodSecurity "restricted:latest": ` + violations; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("restricted: %v\nwant 403 %s", err, want)
	}
	w.take()
	if _, err := c.CoreV1().Pods("psa-warn").Create(ctx(t), testPod("plain", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("warn mode refused: %v", err)
	}
	if got, want := w.take(), []string{`would violate PodSecurity "restricted:latest": ` + violations}; !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
	if _, err := c.CoreV1().Pods("psa-audit").Create(ctx(t), testPod("plain", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("audit mode refused: %v", err)
	}
	if got := w.take(); len(got) != 0 {
		t.Errorf("warnings under audit: %q", got)
	}
	// Tightening a namespace's level is dry-run against its pods: a warning.
	ns, err := c.CoreV1().Namespaces().Get(ctx(t), "psa-warn", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if ns, err = c.CoreV1().Namespaces().Update(ctx(t), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w.take(); len(got) != 2 || got[0] != `existing pods in namespace "psa-warn" violate the new PodSecurity enforce level "restricted:latest"` {
		t.Errorf("warnings on tightening enforce: %q", got)
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "strict"
	if _, err := c.CoreV1().Namespaces().Update(ctx(t), ns, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict"`) {
		t.Errorf("invalid level label: %v, want 422", err)
	}
	want := `would violate PodSecurity "restricted:latest": ` + violations
	if err := waitFor(t, func() error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(data), "\n") {
			var ev struct {
				Verb        string
				ObjectRef   *struct{ Resource, Namespace, Name string }
				Annotations map[string]string
			}
			if json.Unmarshal([]byte(l), &ev) == nil && ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Namespace == "psa-audit" &&
				ev.ObjectRef.Resource == "pods" && ev.Annotations["pod-security.kubernetes.io/audit-violations"] == want {
				return nil
			}
		}
		return &missing{"the audit-violations annotation of the pod in psa-audit"}
	}); err != nil {
		t.Fatal(err)
	}
}

func ptrTo[T any](v T) *T { return &v }
