package registry

import (
	"context"
	"errors"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// watchOnly is a storage whose Watch hands out w; nothing else is called.
type watchOnly struct {
	storage.Interface
	w watch.Interface
}

func (s watchOnly) Watch(context.Context, string, storage.ListOptions) (watch.Interface, error) {
	return s.w, nil
}

// TestSharedWatchConversionFailure: an event that cannot be converted to
// the served kind reaches the watcher as an Error event with a 500 Status,
// never as the stored object under the served kind's name; the events
// around it are converted.
func TestSharedWatchConversionFailure(t *testing.T) {
	fake := watch.NewFake()
	s := NewSharedStorage(watchOnly{w: fake}, &rest.SharedStorage{
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			cm := obj.(*corev1.ConfigMap)
			if cm.Name == "bad" {
				return nil, errors.New("conversion webhook unreachable")
			}
			return &corev1.Secret{ObjectMeta: cm.ObjectMeta}, nil
		},
	})
	w, err := s.Watch(context.Background(), "/configmaps", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		fake.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "good"}})
		fake.Modify(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}})
		fake.Delete(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "good"}})
	}()
	want := []struct {
		typ  watch.EventType
		name string
	}{{watch.Added, "good"}, {watch.Error, ""}, {watch.Deleted, "good"}}
	for i, wnt := range want {
		e := <-w.ResultChan()
		if e.Type != wnt.typ {
			t.Fatalf("event %d: type %s, want %s (%#v)", i, e.Type, wnt.typ, e.Object)
		}
		switch o := e.Object.(type) {
		case *corev1.Secret:
			if o.Name != wnt.name {
				t.Errorf("event %d: %s, want %s", i, o.Name, wnt.name)
			}
		case *metav1.Status:
			if wnt.typ != watch.Error || o.Code != http.StatusInternalServerError || o.Reason != metav1.StatusReasonInternalError {
				t.Errorf("event %d: status %d %s: %s", i, o.Code, o.Reason, o.Message)
			}
		default:
			t.Errorf("event %d: %T, want the served kind or a Status", i, e.Object)
		}
	}
}
