package integration

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/server"
)

// A bootstrap ClusterRole whose rules drifted (edited by hand, or written
// by an older skiff) is put back, as the same object; one marked
// autoupdate=false is left alone.
func TestBootstrapPolicyIsPutBack(t *testing.T) {
	// The objects are reconciled every period; a short one keeps the test
	// short.
	const period = time.Second
	ts := start(t, func(o *server.Options) { o.EndpointReconcileInterval = period })
	ctx := context.Background()
	roles := ts.Client.RbacV1().ClusterRoles()
	var want *rbacv1.ClusterRole
	for _, r := range authz.BootstrapClusterRoles() {
		if r.Name == "system:kube-scheduler" {
			want = r
		}
	}
	before, err := roles.Get(ctx, "system:kube-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drifted := before.DeepCopy()
	drifted.Rules = drifted.Rules[:1]
	if _, err := roles.Update(ctx, drifted, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		now, err := roles.Get(ctx, "system:kube-scheduler", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !equality.Semantic.DeepEqual(now.Rules, want.Rules) {
			return false, nil
		}
		if now.UID != before.UID || !now.CreationTimestamp.Equal(&before.CreationTimestamp) {
			t.Fatalf("the role was replaced by another object: uid %s -> %s", before.UID, now.UID)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the drifted role was not put back: %v", err)
	}

	kept, err := roles.Get(ctx, "system:kube-proxy", metav1.GetOptions{})
	if err != nil {
		kept, err = roles.Get(ctx, "system:node-proxier", metav1.GetOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	kept.Annotations = map[string]string{authz.AutoUpdateAnnotation: "false"}
	kept.Rules = kept.Rules[:1]
	if _, err := roles.Update(ctx, kept, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Three reconcile periods later the operator's version is still there.
	deadline := time.Now().Add(3 * period)
	err = wait.PollUntilContextTimeout(ctx, period/4, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		now, err := roles.Get(ctx, kept.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if len(now.Rules) != 1 {
			t.Fatalf("autoupdate=false was overwritten: %d rules", len(now.Rules))
		}
		return time.Now().After(deadline), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
