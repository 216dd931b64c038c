package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const ssaConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
  namespace: default
data:
  a: "1"
  b: "2"
`

// managedBy returns the managedFields entries of a kubectl get -o json.
func configMapOf(t *testing.T, out string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal([]byte(out), cm); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	return cm
}

func entry(cm *corev1.ConfigMap, manager string) *metav1.ManagedFieldsEntry {
	for i := range cm.ManagedFields {
		if cm.ManagedFields[i].Manager == manager {
			return &cm.ManagedFields[i]
		}
	}
	return nil
}

func owns(e *metav1.ManagedFieldsEntry, field string) bool {
	return e != nil && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), `"f:`+field+`"`)
}

// TestKubectlServerSideApply drives server-side apply with the real
// kubectl: create and update by apply, fields removed when the applier
// stops applying them, ownership in managedFields, conflicts between
// managers and --force-conflicts, and the Update entries of other verbs.
func TestKubectlServerSideApply(t *testing.T) {
	k, _ := newKubectl(t)
	f := writeFile(t, "cm.yaml", ssaConfigMap)
	if out := k.run("apply", "--server-side", "-f", f); strings.TrimSpace(out) != "configmap/ssa serverside-applied" {
		t.Errorf("first apply: %q", out)
	}
	cm := configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json", "--show-managed-fields"))
	e := entry(cm, "kubectl")
	if e == nil || e.Operation != metav1.ManagedFieldsOperationApply || e.APIVersion != "v1" || e.FieldsType != "FieldsV1" || !owns(e, "a") || !owns(e, "b") {
		t.Fatalf("managedFields after apply: %+v", cm.ManagedFields)
	}
	// kubectl hides managedFields unless asked, as against upstream.
	if out := k.run("get", "configmap", "ssa", "-o", "yaml"); strings.Contains(out, "managedFields") {
		t.Errorf("get -o yaml shows managedFields:\n%s", out)
	}

	// The applier drops b and changes a: b goes, a changes.
	f = writeFile(t, "cm.yaml", strings.Replace(strings.Replace(ssaConfigMap, `  b: "2"`+"\n", "", 1), `a: "1"`, `a: "10"`, 1))
	k.run("apply", "--server-side", "-f", f)
	cm = configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json"))
	if cm.Data["a"] != "10" || len(cm.Data) != 1 {
		t.Errorf("data after the second apply: %v", cm.Data)
	}

	// Another manager applying a different value for a conflicts.
	other := writeFile(t, "other.yaml", strings.Replace(ssaConfigMap, `a: "1"`, `a: "20"`, 1))
	out, err := k.try("apply", "--server-side", "--field-manager", "other", "-f", other)
	if err == nil || !strings.Contains(out, `Apply failed with 1 conflict: conflict with "kubectl": .data.a`) {
		t.Errorf("conflicting apply: %v %q", err, out)
	}
	cm = configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json"))
	if cm.Data["a"] != "10" {
		t.Errorf("a conflicting apply changed a to %q", cm.Data["a"])
	}
	// Forced, it takes a over.
	k.run("apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", other)
	cm = configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json", "--show-managed-fields"))
	if cm.Data["a"] != "20" || cm.Data["b"] != "2" {
		t.Errorf("data after the forced apply: %v", cm.Data)
	}
	if owns(entry(cm, "kubectl"), "a") || !owns(entry(cm, "other"), "a") {
		t.Errorf("a not moved to other: %+v", cm.ManagedFields)
	}

	// Other verbs are recorded as Update by their field manager.
	k.run("patch", "configmap", "ssa", "-p", `{"data":{"c":"3"}}`)
	cm = configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json", "--show-managed-fields"))
	if e := entry(cm, "kubectl-patch"); e == nil || e.Operation != metav1.ManagedFieldsOperationUpdate || !owns(e, "c") {
		t.Errorf("patch entry: %+v", cm.ManagedFields)
	}

	// Server-side dry run and diff change nothing.
	dry := writeFile(t, "dry.yaml", strings.Replace(ssaConfigMap, `a: "1"`, `a: "30"`, 1))
	k.run("apply", "--server-side", "--field-manager", "other", "--dry-run=server", "-f", dry)
	if out, err := k.try("diff", "--server-side", "--field-manager", "other", "-f", dry); err == nil || !strings.Contains(out, `+  a: "30"`) {
		t.Errorf("diff --server-side: %v\n%s", err, out)
	}
	cm = configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json"))
	if cm.Data["a"] != "20" {
		t.Errorf("dry run changed a to %q", cm.Data["a"])
	}
}

// TestKubectlClientToServerSideApply: an object made by client-side apply
// moves to server-side apply without conflicts, kubectl rewriting the
// managedFields of kubectl-client-side-apply to its own (a JSON patch of
// metadata.managedFields, which the server takes as sent).
func TestKubectlClientToServerSideApply(t *testing.T) {
	k, _ := newKubectl(t)
	k.run("apply", "-f", writeFile(t, "cm.yaml", ssaConfigMap))
	cm := configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json", "--show-managed-fields"))
	if e := entry(cm, "kubectl-client-side-apply"); e == nil || e.Operation != metav1.ManagedFieldsOperationUpdate || !owns(e, "a") {
		t.Fatalf("after client-side apply: %+v", cm.ManagedFields)
	}
	changed := writeFile(t, "cm2.yaml", strings.Replace(ssaConfigMap, `a: "1"`, `a: "5"`, 1))
	if out := k.run("apply", "--server-side", "-f", changed); strings.TrimSpace(out) != "configmap/ssa serverside-applied" {
		t.Errorf("server-side apply after client-side: %q", out)
	}
	cm = configMapOf(t, k.run("get", "configmap", "ssa", "-o", "json", "--show-managed-fields"))
	if cm.Data["a"] != "5" {
		t.Errorf("a = %q", cm.Data["a"])
	}
	if entry(cm, "kubectl-client-side-apply") != nil || !owns(entry(cm, "kubectl"), "a") || entry(cm, "kubectl").Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("managedFields after the move: %+v", cm.ManagedFields)
	}
}
