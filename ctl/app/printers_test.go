package app

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/ctl/pkg/printers"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n--- got ---\n%s--- want ---\n%s", path, got, want)
	}
}

func TestAPIResourcesPrinter(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: []string{"get", "list"}, Categories: []string{"all"}},
			{Name: "deployments/scale", Namespaced: true, Kind: "Scale"},
		}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Verbs: []string{"create", "get"}, Categories: []string{"all"}},
			{Name: "namespaces", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: []string{"get"}},
		}},
	}
	for _, tt := range []struct {
		file string
		o    APIResourcesOptions
	}{
		{"api-resources.txt", APIResourcesOptions{}},
		{"api-resources-wide.txt", APIResourcesOptions{Output: "wide"}},
		{"api-resources-name.txt", APIResourcesOptions{Output: "name", Namespaced: "true"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.o.Print(&buf, lists); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, buf.Bytes())
		})
	}
}

func TestEventsPrinter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ev := func(ns, reason, kind, name, msg string, ago time.Duration) corev1.Event {
		return corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Type: "Normal", Reason: reason, Message: msg,
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name},
			LastTimestamp:  metav1.NewTime(now.Add(-ago)),
		}
	}
	items := []corev1.Event{
		ev("default", "ScalingReplicaSet", "Deployment", "web", "Scaled up replica set web-7d9c to 2", 90*time.Second),
		ev("default", "Scheduled", "Pod", "web-7d9c-abcde", "Successfully assigned default/web-7d9c-abcde to node-1", 80*time.Second),
		ev("kube-system", "SuccessfulCreate", "ReplicaSet", "web-7d9c", "Created pod: web-7d9c-abcde", 3*time.Hour),
	}
	for _, tt := range []struct {
		file string
		o    EventsOptions
	}{
		{"events.txt", EventsOptions{}},
		{"events-all-namespaces.txt", EventsOptions{AllNamespaces: true}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.o.Print(printers.NewColumns(&buf), append([]corev1.Event(nil), items...), now, true); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, buf.Bytes())
		})
	}
}

func TestRolloutHistoryPrinter(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "d1"}}
	yes := true
	mk := func(name, rev, cause string) *appsv1.ReplicaSet {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"deployment.kubernetes.io/revision": rev},
			OwnerReferences: []metav1.OwnerReference{{UID: "d1", Controller: &yes}}},
			Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:" + rev}}}}}}
		if cause != "" {
			rs.Annotations["kubernetes.io/change-cause"] = cause
		}
		return rs
	}
	owned := []*appsv1.ReplicaSet{mk("web-a", "1", ""), mk("web-b", "2", "image web:2")}
	var buf bytes.Buffer
	if err := PrintHistory(&buf, d, owned, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "rollout-history.txt", buf.Bytes())
	buf.Reset()
	if err := PrintHistory(&buf, d, owned, 2); err != nil {
		t.Fatal(err)
	}
	golden(t, "rollout-history-revision.txt", buf.Bytes())
}
