package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDryRunOnEveryWrite(t *testing.T) {
	ts := start(t, nil)
	cms := ts.Client.CoreV1().ConfigMaps("default")
	dry := []string{metav1.DryRunAll}
	out, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{DryRun: dry})
	if err != nil || out.Name != "dry" || out.UID == "" {
		t.Fatalf("dry create: %v %+v", err, out)
	}
	if _, err := cms.Get(ctx(t), "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a dry create stored the object: %v", err)
	}
	cm, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "real"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["a"] = "2"
	if out, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{DryRun: dry}); err != nil || out.Data["a"] != "2" {
		t.Errorf("dry update: %v %v", err, out)
	}
	if out, err := cms.Patch(ctx(t), "real", "application/merge-patch+json", []byte(`{"data":{"a":"3"}}`), metav1.PatchOptions{DryRun: dry}); err != nil || out.Data["a"] != "3" {
		t.Errorf("dry patch: %v %v", err, out)
	}
	if err := cms.Delete(ctx(t), "real", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Errorf("dry delete: %v", err)
	}
	if err := cms.DeleteCollection(ctx(t), metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{}); err != nil {
		t.Errorf("dry deletecollection: %v", err)
	}
	got, err := cms.Get(ctx(t), "real", metav1.GetOptions{})
	if err != nil || got.Data["a"] != "1" || got.ResourceVersion != cm.ResourceVersion {
		t.Errorf("after dry writes: %v %+v", err, got)
	}
	// Validation and admission still run.
	_, err = cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{DryRun: dry})
	if !apierrors.IsInvalid(err) {
		t.Errorf("invalid dry create: %v", err)
	}
	_, err = ts.Client.CoreV1().ConfigMaps("nowhere").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{DryRun: dry})
	if !apierrors.IsNotFound(err) {
		t.Errorf("dry create in a missing namespace: %v, want 404 from admission", err)
	}
}
