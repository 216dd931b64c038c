package rollout

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func int32p(i int32) *int32 { return &i }

func TestStatus(t *testing.T) {
	base := func(st appsv1.DeploymentStatus) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
			Spec:       appsv1.DeploymentSpec{Replicas: int32p(3)},
			Status:     st,
		}
	}
	tests := []struct {
		name     string
		d        *appsv1.Deployment
		want     string
		wantDone bool
		wantErr  string
	}{
		{name: "not observed", d: base(appsv1.DeploymentStatus{ObservedGeneration: 1}),
			want: "Waiting for deployment spec update to be observed..."},
		{name: "updating", d: base(appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 1, Replicas: 3}),
			want: `Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...`},
		{name: "old pending", d: base(appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 3, Replicas: 4}),
			want: `Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...`},
		{name: "not available", d: base(appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 3, Replicas: 3, AvailableReplicas: 2}),
			want: `Waiting for deployment "web" rollout to finish: 2 of 3 updated replicas are available...`},
		{name: "done", d: base(appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 3, Replicas: 3, AvailableReplicas: 3}),
			want: `deployment "web" successfully rolled out`, wantDone: true},
		{name: "deadline", d: base(appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}}),
			wantErr: "exceeded its progress deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, done, err := Status(tt.d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || msg != tt.want || done != tt.wantDone {
				t.Errorf("Status = %q, %v, %v; want %q, %v", msg, done, err, tt.want, tt.wantDone)
			}
		})
	}
}

func rs(name, rev string, image string, owner types.UID) appsv1.ReplicaSet {
	yes := true
	return appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{RevisionAnnotation: rev, "custom": "from-" + name},
			OwnerReferences: []metav1.OwnerReference{{UID: owner, Controller: &yes}}},
		Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "pod-template-hash": name}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		}},
	}
}

func TestForRevisionAndUndoPatch(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "d1",
		Annotations: map[string]string{RevisionAnnotation: "3", corev1.LastAppliedConfigAnnotation: "{}", "custom": "current"}}}
	all := []appsv1.ReplicaSet{rs("c", "3", "web:3", "d1"), rs("a", "1", "web:1", "d1"), rs("b", "2", "web:2", "d1"), rs("x", "9", "other", "d2")}
	owned := Owned(d, all)
	if len(owned) != 3 || owned[0].Name != "a" || owned[2].Name != "c" {
		t.Fatalf("Owned = %v", owned)
	}
	prev, err := ForRevision(owned, 0)
	if err != nil || prev.Name != "b" {
		t.Fatalf("previous revision = %v, %v; want b", prev, err)
	}
	if r, err := ForRevision(owned, 1); err != nil || r.Name != "a" {
		t.Errorf("revision 1 = %v, %v", r, err)
	}
	if _, err := ForRevision(owned, 7); err == nil {
		t.Error("revision 7 found")
	}
	if _, err := ForRevision(owned[:1], 0); err == nil {
		t.Error("a previous revision found with one ReplicaSet")
	}
	patch, err := UndoPatch(d, prev)
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0].Path != "/spec/template" || ops[1].Path != "/metadata/annotations" {
		t.Fatalf("ops = %+v", ops)
	}
	if strings.Contains(string(ops[0].Value), "pod-template-hash") || !strings.Contains(string(ops[0].Value), "web:2") {
		t.Errorf("template = %s", ops[0].Value)
	}
	var ann map[string]string
	_ = json.Unmarshal(ops[1].Value, &ann)
	if ann["custom"] != "from-b" || ann[RevisionAnnotation] != "3" || ann[corev1.LastAppliedConfigAnnotation] != "{}" {
		t.Errorf("annotations = %v", ann)
	}
	if h := History(owned); len(h) != 3 || h[1].Revision != 2 {
		t.Errorf("History = %+v", h)
	}
}

func TestEqualIgnoreHashAndRestart(t *testing.T) {
	a, b := rs("a", "1", "img", "u"), rs("b", "2", "img", "u")
	if !EqualIgnoreHash(&a.Spec.Template, &b.Spec.Template) {
		t.Error("templates that differ only in the hash label compare unequal")
	}
	b.Spec.Template.Spec.Containers[0].Image = "other"
	if EqualIgnoreHash(&a.Spec.Template, &b.Spec.Template) {
		t.Error("templates with different images compare equal")
	}
	got := string(RestartPatch(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	want := `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-01-02T03:04:05Z"}}}}}`
	if got != want {
		t.Errorf("RestartPatch = %s, want %s", got, want)
	}
}
