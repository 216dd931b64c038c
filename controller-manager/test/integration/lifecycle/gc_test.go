package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/controller-manager/pkg/controller/garbagecollector"
)

func ownedBy(owner *corev1.ConfigMap, block bool) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: &block}}
}

func TestGarbageCollectorCascadingDeletion(t *testing.T) {
	e := start(t)
	gc, err := garbagecollector.NewController(e.metadata, e.client.Discovery(), e.recorder, nil, garbagecollector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.run("garbage collector", gc.Run)
	const ns = "gc"
	e.namespace(ns)
	e.requireMetadataWatch(t, ns)
	cms := e.client.CoreV1().ConfigMaps(ns)
	secrets := e.client.CoreV1().Secrets(ns)

	// family creates an owner ConfigMap with a blocking ConfigMap, a
	// non-blocking ConfigMap and a Secret as dependents.
	family := func(prefix string) *corev1.ConfigMap {
		t.Helper()
		owner, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []struct {
			name  string
			block bool
		}{{prefix + "-blocking", true}, {prefix + "-plain", false}} {
			if _, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: d.name, OwnerReferences: ownedBy(owner, d.block)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := secrets.Create(e.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-secret", OwnerReferences: ownedBy(owner, true)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return owner
	}
	dependentsGone := func(prefix string) func() (bool, error) {
		return func() (bool, error) {
			for _, n := range []string{"-blocking", "-plain"} {
				if _, err := cms.Get(e.ctx, prefix+n, metav1.GetOptions{}); err == nil {
					return false, nil
				} else if ok, err := gone(err); !ok {
					return false, err
				}
			}
			_, err := secrets.Get(e.ctx, prefix+"-secret", metav1.GetOptions{})
			if err == nil {
				return false, nil
			}
			return gone(err)
		}
	}
	// barrier returns once the collector has seen every ConfigMap and
	// Secret created so far: it creates a dangling one of each after them
	// and waits for the collector to delete both (each informer delivers
	// its events in order).
	barrier := func(name string) {
		t.Helper()
		block := false
		ref := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "none", UID: types.UID("00000000-0000-0000-0000-0000000000ff"), BlockOwnerDeletion: &block}}
		if _, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: ref}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := secrets.Create(e.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: ref}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.poll(t, "the collector to catch up", func() (bool, error) {
			if _, err := cms.Get(e.ctx, name, metav1.GetOptions{}); err == nil {
				return false, nil
			} else if ok, err := gone(err); !ok {
				return false, err
			}
			_, err := secrets.Get(e.ctx, name, metav1.GetOptions{})
			if err == nil {
				return false, nil
			}
			return gone(err)
		})
	}
	if _, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bystander"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("background", func(t *testing.T) {
		family("bg")
		policy := metav1.DeletePropagationBackground
		if err := cms.Delete(e.ctx, "bg-owner", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			t.Fatal(err)
		}
		e.poll(t, "the background owner's dependents to be deleted", dependentsGone("bg"))
	})

	t.Run("foreground", func(t *testing.T) {
		owner := family("fg")
		barrier("fg-barrier")
		w, err := cms.Watch(e.ctx, metav1.ListOptions{ResourceVersion: owner.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		policy := metav1.DeletePropagationForeground
		if err := cms.Delete(e.ctx, "fg-owner", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			t.Fatal(err)
		}
		got, err := cms.Get(e.ctx, "fg-owner", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("a foreground-deleted owner must stay until its dependents are gone: %v", err)
		}
		if got.DeletionTimestamp == nil || len(got.Finalizers) != 1 || got.Finalizers[0] != metav1.FinalizerDeleteDependents {
			t.Fatalf("owner = %+v, want deletionTimestamp and the foregroundDeletion finalizer", got.ObjectMeta)
		}
		// The owner's DELETED event comes after the blocking dependent's.
		var order []string
		deadline := timeoutChan()
		for len(order) == 0 || order[len(order)-1] != "fg-owner" {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch closed")
				}
				if ev.Type == watch.Deleted {
					order = append(order, ev.Object.(*corev1.ConfigMap).Name)
				}
			case <-deadline:
				t.Fatalf("the owner was not deleted; deletions seen: %v", order)
			}
		}
		if !contains(order, "fg-blocking") {
			t.Errorf("the owner was deleted before its blocking dependent: %v", order)
		}
		e.poll(t, "the foreground owner's dependents to be deleted", dependentsGone("fg"))
	})

	t.Run("orphan", func(t *testing.T) {
		family("or")
		barrier("or-barrier")
		policy := metav1.DeletePropagationOrphan
		if err := cms.Delete(e.ctx, "or-owner", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			t.Fatal(err)
		}
		e.poll(t, "the orphaning owner to be deleted", func() (bool, error) {
			_, err := cms.Get(e.ctx, "or-owner", metav1.GetOptions{})
			if err == nil {
				return false, nil
			}
			return gone(err)
		})
		for _, n := range []string{"or-blocking", "or-plain"} {
			cm, err := cms.Get(e.ctx, n, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("orphaned dependent %s: %v", n, err)
			}
			if len(cm.OwnerReferences) != 0 {
				t.Errorf("orphaned dependent %s still has owner references %+v", n, cm.OwnerReferences)
			}
		}
		s, err := secrets.Get(e.ctx, "or-secret", metav1.GetOptions{})
		if err != nil || len(s.OwnerReferences) != 0 {
			t.Errorf("orphaned secret: %v, owner references %+v", err, s.OwnerReferences)
		}
	})

	t.Run("dangling", func(t *testing.T) {
		block := false
		_, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dangling", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "never-existed", UID: types.UID("00000000-0000-0000-0000-000000000001"), BlockOwnerDeletion: &block}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.poll(t, "the dangling dependent to be deleted", func() (bool, error) {
			_, err := cms.Get(e.ctx, "dangling", metav1.GetOptions{})
			if err == nil {
				return false, nil
			}
			return gone(err)
		})
	})

	if _, err := cms.Get(e.ctx, "bystander", metav1.GetOptions{}); err != nil {
		t.Errorf("a ConfigMap without owners was touched: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
