package deployment

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	core "k8s.io/client-go/testing"
)

func TestRevisions(t *testing.T) {
	d := newDeployment("web", 1, "a")
	var rss []*appsv1.ReplicaSet
	for i, rev := range []int{3, 1, 7, 5} {
		rss = append(rss, newRSFor(d, string(rune('a'+i)), 0, 0, rev, time.Hour))
	}
	if got := MaxRevision(rss); got != 7 {
		t.Errorf("MaxRevision = %d, want 7", got)
	}
	if got := LastRevision(rss); got != 5 {
		t.Errorf("LastRevision = %d, want 5", got)
	}
}

func TestSetNewReplicaSetAnnotations(t *testing.T) {
	tests := []struct {
		name        string
		rsRevision  string
		history     string
		newRevision string
		wantRev     string
		wantHistory string
		wantChanged bool
	}{
		{"new ReplicaSet", "", "", "1", "1", "", true},
		{"already current", "4", "", "4", "4", "", false},
		{"rollback: history starts", "1", "", "3", "3", "1", true},
		{"rollback again: history grows", "3", "1", "5", "5", "1,3", true},
		{"never lowered", "6", "", "5", "6", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDeployment("web", 2, "a")
			d.Annotations = map[string]string{"team": "x", RevisionAnnotation: "9"}
			rs := newRSFor(d, "a", 2, 2, 0, time.Hour)
			delete(rs.Annotations, RevisionAnnotation)
			rs.Annotations["team"] = "x"
			if tt.rsRevision != "" {
				rs.Annotations[RevisionAnnotation] = tt.rsRevision
			}
			if tt.history != "" {
				rs.Annotations[RevisionHistoryAnnotation] = tt.history
			}
			changed := SetNewReplicaSetAnnotations(d, rs, tt.newRevision, true)
			if changed != tt.wantChanged || rs.Annotations[RevisionAnnotation] != tt.wantRev || rs.Annotations[RevisionHistoryAnnotation] != tt.wantHistory {
				t.Errorf("changed %v annotations %v", changed, rs.Annotations)
			}
		})
	}
	// The deployment's own annotations are copied, its revision is not.
	d := newDeployment("web", 2, "a")
	d.Annotations = map[string]string{"team": "y", RevisionAnnotation: "9", lastAppliedConfigAnnotation: "{}"}
	rs := &appsv1.ReplicaSet{}
	SetNewReplicaSetAnnotations(d, rs, "1", false)
	if rs.Annotations["team"] != "y" || rs.Annotations[RevisionAnnotation] != "1" || rs.Annotations[lastAppliedConfigAnnotation] != "" ||
		rs.Annotations[DesiredReplicasAnnotation] != "2" || rs.Annotations[MaxReplicasAnnotation] != "3" {
		t.Errorf("annotations %v", rs.Annotations)
	}
}

func TestRevisionHistoryBounded(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		RevisionHistoryAnnotation: strings.Repeat("1234,", 399) + "1234", // 1999 chars
	}}}
	appendRevisionHistory(rs, "99999")
	h := rs.Annotations[RevisionHistoryAnnotation]
	if len(h) > maxRevHistoryLengthInChars || !strings.HasSuffix(h, ",99999") {
		t.Errorf("history of %d chars ends %q", len(h), h[len(h)-10:])
	}
}

func TestHashCollisionBumpsCollisionCount(t *testing.T) {
	d := newDeployment("web", 2, "b")
	// Someone else's ReplicaSet has the name the new one would get.
	hash := ComputeHash(&d.Spec.Template, nil)
	squatter := newRSFor(newDeployment("other", 1, "z"), "z", 1, 1, 1, time.Hour)
	squatter.Name = "web-" + hash
	squatter.OwnerReferences = nil
	squatter.Labels = map[string]string{"app": "other"}
	f := newFixture(t, d, squatter)
	f.client.ClearActions()
	if err := f.c.sync(t.Context(), "default/web"); err == nil {
		t.Fatal("want the AlreadyExists error")
	}
	st := f.lastDeploymentStatus()
	if st == nil || st.Status.CollisionCount == nil || *st.Status.CollisionCount != 1 {
		t.Fatalf("collisionCount not bumped: %v", f.writes())
	}
	if ComputeHash(&d.Spec.Template, st.Status.CollisionCount) == hash {
		t.Error("the bumped collision count gives the same name")
	}
}

func TestReplicaFailurePropagates(t *testing.T) {
	d := newDeployment("web", 2, "a")
	d.Annotations = map[string]string{RevisionAnnotation: "1"}
	rs := newRSFor(d, "a", 2, 0, 1, time.Hour)
	rs.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
		Reason: "FailedCreate", Message: "pods \"x\" is forbidden: exceeded quota"}}
	f := newFixture(t, d, rs)
	f.sync(d)
	st := f.lastDeploymentStatus()
	if st == nil {
		t.Fatalf("no status: %v", f.writes())
	}
	c := GetDeploymentCondition(st.Status, appsv1.DeploymentReplicaFailure)
	if c == nil || c.Reason != "FailedCreate" || !strings.Contains(c.Message, "exceeded quota") {
		t.Errorf("ReplicaFailure = %+v", c)
	}
}

func TestRollbackToSameTemplateWarns(t *testing.T) {
	d := newDeployment("web", 2, "a")
	d.Annotations = map[string]string{RevisionAnnotation: "1", RollbackToAnnotation: "1"}
	rs := newRSFor(d, "a", 2, 2, 1, time.Hour)
	f := newFixture(t, d, rs)
	f.sync(d)
	evs := f.events()
	if len(evs) != 1 || !strings.Contains(evs[0], RollbackTemplateUnchanged) {
		t.Errorf("events = %v", evs)
	}
	var cleared bool
	for _, a := range f.client.Actions() {
		if u, ok := a.(core.UpdateAction); ok && a.GetVerb() == "update" && a.GetSubresource() == "" && a.GetResource().Resource == "deployments" {
			_, has := u.GetObject().(*appsv1.Deployment).Annotations[RollbackToAnnotation]
			cleared = !has
		}
	}
	if !cleared {
		t.Errorf("rollback request not cleared: %v", f.writes())
	}
}
