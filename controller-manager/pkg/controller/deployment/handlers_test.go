package deployment

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
)

func drain(f *fixture) []string {
	var keys []string
	for f.c.queue.Len() > 0 {
		k, _ := f.c.queue.Get()
		f.c.queue.Done(k)
		f.c.queue.Forget(k)
		keys = append(keys, k)
	}
	return keys
}

func TestReplicaSetEventsEnqueueDeployments(t *testing.T) {
	web := newDeployment("web", 1, "a")
	db := newDeployment("db", 1, "a")
	f := newFixture(t, web, db)

	owned := newRSFor(web, "a", 1, 1, 1, time.Hour)
	f.c.addReplicaSet(owned)
	if keys := drain(f); len(keys) != 1 || keys[0] != "default/web" {
		t.Errorf("owned add: queued %v", keys)
	}

	orphan := newRSFor(db, "a", 1, 1, 1, time.Hour)
	orphan.OwnerReferences = nil
	f.c.addReplicaSet(orphan)
	if keys := drain(f); len(keys) != 1 || keys[0] != "default/db" {
		t.Errorf("orphan add: queued %v", keys)
	}

	// An orphan whose labels change to match another Deployment.
	relabeled := orphan.DeepCopy()
	relabeled.Labels = map[string]string{"app": "web"}
	relabeled.ResourceVersion = "2"
	f.c.updateReplicaSet(orphan, relabeled)
	if keys := drain(f); len(keys) != 1 || keys[0] != "default/web" {
		t.Errorf("relabeled orphan: queued %v", keys)
	}

	// A resync (same resourceVersion) queues nothing.
	f.c.updateReplicaSet(owned, owned)
	if keys := drain(f); len(keys) != 0 {
		t.Errorf("resync: queued %v", keys)
	}
}

func TestPodDeletionWakesRecreate(t *testing.T) {
	d := newDeployment("db", 1, "a")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	rs := newRSFor(d, "a", 0, 0, 1, time.Hour)
	f := newFixture(t, d, rs)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{*controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet")}}}
	f.c.deletePod(pod)
	if keys := drain(f); len(keys) != 1 || keys[0] != "default/db" {
		t.Errorf("last pod gone: queued %v", keys)
	}
	rolling := newDeployment("web", 1, "a")
	rs2 := newRSFor(rolling, "a", 0, 0, 1, time.Hour)
	f = newFixture(t, rolling, rs2)
	pod.OwnerReferences = []metav1.OwnerReference{*controllerutil.NewControllerRef(rs2, "apps/v1", "ReplicaSet")}
	f.c.deletePod(pod)
	if keys := drain(f); len(keys) != 0 {
		t.Errorf("RollingUpdate: queued %v", keys)
	}
}
