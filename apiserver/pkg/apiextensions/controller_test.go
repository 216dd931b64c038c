package apiextensions

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
)

// establishedCRD is a CRD whose status already holds what the controller
// would write (names accepted, established), so that reconciling it
// writes nothing.
func establishedCRD(plural, rv string) *apiextensionsv1.CustomResourceDefinition {
	crd := validCRD()
	crd.Name = plural + ".example.com"
	crd.UID = types.UID("uid-" + plural)
	crd.ResourceVersion = rv
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: plural[:len(plural)-1], Kind: "K" + plural, ListKind: "K" + plural + "List"}
	crd.Status = desiredStatus(crd, nil).Status
	return crd
}

// crdSource is the controller's ListerWatcher: it counts lists and hands
// out a watch the test drives.
type crdSource struct {
	mu      sync.Mutex
	lists   int
	items   []apiextensionsv1.CustomResourceDefinition
	watcher *watch.FakeWatcher
}

func (s *crdSource) lw() cache.ListerWatcher {
	return &cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.lists++
			return &apiextensionsv1.CustomResourceDefinitionList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: s.items}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.watcher = watch.NewFakeWithChanSize(10, false)
			return s.watcher, nil
		},
		DisableChunking: true,
	}
}

// TestControllerHandlesOneCRDPerEvent: the controller lists the CRDs once;
// each later change is reconciled for the CRD it concerns alone (its
// storage built or rebuilt, or stopped), without listing again.
func TestControllerHandlesOneCRDPerEvent(t *testing.T) {
	src := &crdSource{items: []apiextensionsv1.CustomResourceDefinition{*establishedCRD("things", "5")}}
	var mu sync.Mutex
	var built []string           // the CRDs whose storage was built, in order
	stopped := map[string]bool{} // the CRDs whose storage stopped running
	var served [][]string        // the resources served after each change
	c := &Controller{
		ListerWatcher: src.lw(),
		Synced:        make(chan struct{}),
		NewStorage: func(r *registry.Resource) (storage.Interface, func(context.Context) error) {
			mu.Lock()
			built = append(built, r.Resource)
			mu.Unlock()
			return nil, func(ctx context.Context) error {
				<-ctx.Done()
				mu.Lock()
				stopped[r.Resource] = true
				mu.Unlock()
				return nil
			}
		},
		Serve: func(stores []*registry.Store) {
			var names []string
			for _, st := range stores {
				names = append(names, st.R.Resource+"/"+st.R.Version)
			}
			mu.Lock()
			served = append(served, names)
			mu.Unlock()
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-c.Synced:
	case <-time.After(10 * time.Second):
		t.Fatal("the controller did not sync")
	}
	state := func() ([]string, map[string]bool, []string, int) {
		mu.Lock()
		defer mu.Unlock()
		src.mu.Lock()
		defer src.mu.Unlock()
		var last []string
		if len(served) > 0 {
			last = served[len(served)-1]
		}
		stoppedCopy := map[string]bool{}
		for k, v := range stopped {
			stoppedCopy[k] = v
		}
		return slices.Clone(built), stoppedCopy, last, src.lists
	}
	waitFor := func(what string, cond func(built []string, stopped map[string]bool, served []string, lists int) bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return cond(state()), nil
		})
		if err != nil {
			b, s, sv, l := state()
			t.Fatalf("waiting for %s: built %v, stopped %v, served %v, %d lists", what, b, s, sv, l)
		}
	}
	waitFor("the stored CRD served", func(b []string, _ map[string]bool, sv []string, _ int) bool {
		return slices.Equal(b, []string{"things"}) && slices.Equal(sv, []string{"things/v1"})
	})
	src.mu.Lock()
	w := src.watcher
	src.mu.Unlock()

	// A new CRD: only it is built.
	w.Add(establishedCRD("gadgets", "11"))
	waitFor("the new CRD served", func(b []string, _ map[string]bool, sv []string, _ int) bool {
		return slices.Equal(b, []string{"things", "gadgets"}) && slices.Equal(sv, []string{"gadgets/v1", "things/v1"})
	})
	// A change of one CRD's spec rebuilds that one alone.
	changed := establishedCRD("things", "12")
	changed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["m"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	w.Modify(changed)
	waitFor("the changed CRD rebuilt", func(b []string, s map[string]bool, _ []string, _ int) bool {
		return slices.Equal(b, []string{"things", "gadgets", "things"}) && s["things"] && !s["gadgets"]
	})
	// A status-only change (same spec and names) rebuilds nothing.
	same := establishedCRD("gadgets", "13")
	same.Labels = map[string]string{"touched": "yes"}
	w.Modify(same)
	// A deleted CRD stops being served.
	w.Delete(establishedCRD("gadgets", "14"))
	waitFor("the deleted CRD no longer served", func(b []string, s map[string]bool, sv []string, _ int) bool {
		return s["gadgets"] && slices.Equal(sv, []string{"things/v1"})
	})
	b, _, _, lists := state()
	if lists != 1 {
		t.Errorf("the controller listed %d times; want once, then one CRD per event", lists)
	}
	if !slices.Equal(b, []string{"things", "gadgets", "things"}) {
		t.Errorf("built %v; want things, gadgets, things (each CRD only on its own change)", b)
	}
}
