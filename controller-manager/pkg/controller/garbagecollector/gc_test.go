package garbagecollector

import (
	"context"
	"encoding/json"
	"sort"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// object is a ConfigMap's metadata.
func object(name string, uid types.UID, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid, OwnerReferences: owners},
	}
}

func ownerRef(name string, uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: uid, BlockOwnerDeletion: &block}
}

func deleting(o *metav1.PartialObjectMetadata, finalizers ...string) *metav1.PartialObjectMetadata {
	now := metav1.Now()
	o.DeletionTimestamp = &now
	o.Finalizers = finalizers
	return o
}

type harness struct {
	t      *testing.T
	gc     *Controller
	client *fake.FakeMetadataClient
	rec    *recorder
}

// recorder records the propagation policy of deletions (the fake's
// actions do not carry the delete options).
type recorder struct {
	metadata.Interface
	policies map[string]metav1.DeletionPropagation
}

func (r *recorder) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	return recordingGetter{r.Interface.Resource(gvr), r}
}

type recordingGetter struct {
	metadata.Getter
	r *recorder
}

func (g recordingGetter) Namespace(ns string) metadata.ResourceInterface {
	return recordingResource{g.Getter.Namespace(ns), g.r}
}

type recordingResource struct {
	metadata.ResourceInterface
	r *recorder
}

func (rr recordingResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	if rr.r.policies == nil {
		rr.r.policies = map[string]metav1.DeletionPropagation{}
	}
	if opts.PropagationPolicy != nil {
		rr.r.policies[name] = *opts.PropagationPolicy
	}
	return rr.ResourceInterface.Delete(ctx, name, opts, sub...)
}

func newHarness(t *testing.T, objs ...*metav1.PartialObjectMetadata) *harness {
	t.Helper()
	var rt []runtime.Object
	for _, o := range objs {
		rt = append(rt, o)
	}
	scheme := fake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := fake.NewSimpleMetadataClient(scheme, rt...)
	rec := &recorder{Interface: client}
	gc := &Controller{
		metadata:        rec,
		graph:           newGraph(),
		attemptToDelete: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.UID]()),
		attemptToOrphan: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.UID]()),
		mapper: restmapper.NewDiscoveryRESTMapper([]*restmapper.APIGroupResources{{
			Group: metav1.APIGroup{Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "v1", Version: "v1"}},
				PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "v1", Version: "v1"}},
			VersionedResources: map[string][]metav1.APIResource{"v1": {{Name: "configmaps", Namespaced: true, Kind: "ConfigMap"}}},
		}}),
	}
	t.Cleanup(gc.attemptToDelete.ShutDown)
	t.Cleanup(gc.attemptToOrphan.ShutDown)
	h := &harness{t: t, gc: gc, client: client, rec: rec}
	for _, o := range objs {
		h.observe(o)
	}
	return h
}

func (h *harness) observe(o *metav1.PartialObjectMetadata) {
	id := objectReference{OwnerReference: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID}, Namespace: o.Namespace}
	h.gc.enqueue(h.gc.graph.observe(id, o.OwnerReferences, o.DeletionTimestamp != nil, o.Finalizers))
}

// drain runs both queues until they are empty (bounded), and returns the
// UIDs attemptToDelete processed.
func (h *harness) drain() []types.UID {
	h.t.Helper()
	var seen []types.UID
	ctx := context.Background()
	for i := 0; i < 100 && (h.gc.attemptToDelete.Len() > 0 || h.gc.attemptToOrphan.Len() > 0); i++ {
		for h.gc.attemptToOrphan.Len() > 0 {
			uid, _ := h.gc.attemptToOrphan.Get()
			if err := h.gc.attemptToOrphanItem(ctx, uid); err != nil {
				h.t.Fatalf("attemptToOrphan %s: %v", uid, err)
			}
			h.gc.attemptToOrphan.Done(uid)
		}
		for h.gc.attemptToDelete.Len() > 0 {
			uid, _ := h.gc.attemptToDelete.Get()
			seen = append(seen, uid)
			if err := h.gc.attemptToDeleteItem(ctx, uid); err != nil && err != errRequeue {
				h.t.Fatalf("attemptToDelete %s: %v", uid, err)
			}
			h.gc.attemptToDelete.Done(uid)
		}
	}
	return seen
}

// writes are the mutating actions, as "verb name [policy|patch]".
func (h *harness) writes() []string {
	var out []string
	for _, a := range h.client.Actions() {
		switch a := a.(type) {
		case clienttesting.DeleteActionImpl:
			out = append(out, "delete "+a.Name+" "+string(h.rec.policies[a.Name]))
		case clienttesting.PatchActionImpl:
			out = append(out, "patch "+a.Name+" "+string(a.Patch))
		}
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGarbageCollector(t *testing.T) {
	tests := []struct {
		name string
		objs []*metav1.PartialObjectMetadata
		// gone are objects the server no longer has (deleted) that the
		// graph still holds: removed from the fake before draining.
		gone  []string
		after func(h *harness)
		want  []string
		// unordered: the writes may come in any order.
		unordered bool
	}{
		{
			name: "dangling dependent is deleted in the background",
			objs: []*metav1.PartialObjectMetadata{object("dep", "d1", ownerRef("owner", "o1", false))},
			want: []string{"delete dep Background"},
		},
		{
			name: "dependent of an existing owner stays",
			objs: []*metav1.PartialObjectMetadata{object("owner", "o1"), object("dep", "d1", ownerRef("owner", "o1", false))},
			want: nil,
		},
		{
			name: "owner recreated with another UID: the dependent is dangling",
			objs: []*metav1.PartialObjectMetadata{object("owner", "o2"), object("dep", "d1", ownerRef("owner", "o1", false))},
			want: []string{"delete dep Background"},
		},
		{
			name: "dependent with one absent and one existing owner loses only the absent one",
			objs: []*metav1.PartialObjectMetadata{object("owner", "o1"),
				object("dep", "d1", ownerRef("owner", "o1", false), ownerRef("gone", "o9", false))},
			want: []string{`patch dep {"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"o1","blockOwnerDeletion":false}],"uid":"d1"}}`},
		},
		{
			name: "background: the owner deleted, its dependents go",
			objs: []*metav1.PartialObjectMetadata{object("owner", "o1"), object("a", "d1", ownerRef("owner", "o1", false)),
				object("b", "d2", ownerRef("owner", "o1", true))},
			gone:      []string{"owner"},
			want:      []string{"delete a Background", "delete b Background"},
			unordered: true, // dependents are a set
		},
		{
			name: "orphan: the reference is removed from dependents, then the finalizer from the owner",
			objs: []*metav1.PartialObjectMetadata{deleting(object("owner", "o1"), metav1.FinalizerOrphanDependents),
				object("dep", "d1", ownerRef("owner", "o1", true))},
			want: []string{`patch dep {"metadata":{"ownerReferences":null,"uid":"d1"}}`,
				`patch owner {"metadata":{"finalizers":null,"resourceVersion":""}}`},
		},
		{
			name: "foreground: the blocking dependent is deleted first, the owner keeps its finalizer",
			objs: []*metav1.PartialObjectMetadata{deleting(object("owner", "o1"), metav1.FinalizerDeleteDependents),
				object("dep", "d1", ownerRef("owner", "o1", true))},
			want: []string{"delete dep Background"},
		},
		{
			name: "foreground: once the blocking dependent is gone, the finalizer is removed",
			objs: []*metav1.PartialObjectMetadata{deleting(object("owner", "o1"), metav1.FinalizerDeleteDependents),
				object("dep", "d1", ownerRef("owner", "o1", true))},
			after: func(h *harness) {
				h.client.ClearActions()
				h.gc.enqueue(h.gc.graph.remove("d1"))
			},
			want: []string{`patch owner {"metadata":{"finalizers":null,"resourceVersion":""}}`},
		},
		{
			name: "foreground: a dependent without blockOwnerDeletion does not hold the owner",
			objs: []*metav1.PartialObjectMetadata{deleting(object("owner", "o1"), metav1.FinalizerDeleteDependents),
				object("dep", "d1", ownerRef("owner", "o1", false))},
			after: func(h *harness) {
				// The server deletes the owner once its finalizer is gone.
				if err := h.client.Tracker().Delete(configMaps, "ns", "owner"); err != nil {
					h.t.Fatal(err)
				}
				h.gc.enqueue(h.gc.graph.remove("o1"))
			},
			want: []string{`patch owner {"metadata":{"finalizers":null,"resourceVersion":""}}`, "delete dep Background"},
		},
		{
			name: "foreground: a dependent that has dependents of its own is deleted in the foreground",
			objs: []*metav1.PartialObjectMetadata{deleting(object("owner", "o1"), metav1.FinalizerDeleteDependents),
				object("mid", "m1", ownerRef("owner", "o1", true)), object("leaf", "l1", ownerRef("mid", "m1", true))},
			want: []string{"delete mid Foreground"},
		},
		{
			name: "foreground cycle: a dependent whose own dependent waits too stops blocking its owner",
			objs: []*metav1.PartialObjectMetadata{deleting(object("owner", "o1"), metav1.FinalizerDeleteDependents),
				object("mid", "m1", ownerRef("owner", "o1", true)),
				deleting(object("leaf", "l1", ownerRef("mid", "m1", true)), metav1.FinalizerDeleteDependents)},
			unordered: true,
			want: []string{
				"delete mid Foreground",
				`patch leaf {"metadata":{"finalizers":null,"resourceVersion":""}}`,
				`patch mid {"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"o1","blockOwnerDeletion":false}],"uid":"m1"}}`,
			},
		},
		{
			name: "an object with the orphan finalizer whose owner is gone is deleted with Orphan",
			objs: []*metav1.PartialObjectMetadata{func() *metav1.PartialObjectMetadata {
				o := object("dep", "d1", ownerRef("owner", "o1", false))
				o.Finalizers = []string{metav1.FinalizerOrphanDependents}
				return o
			}()},
			want: []string{"delete dep Orphan"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.objs...)
			for _, name := range tt.gone {
				if err := h.client.Tracker().Delete(configMaps, "ns", name); err != nil {
					t.Fatal(err)
				}
				var uid types.UID
				for _, o := range tt.objs {
					if o.Name == name {
						uid = o.UID
					}
				}
				h.gc.enqueue(h.gc.graph.remove(uid))
			}
			h.drain()
			if tt.after != nil {
				tt.after(h)
				h.drain()
			}
			got := h.writes()
			if tt.unordered {
				sort.Strings(got)
				sort.Strings(tt.want)
			}
			if !equal(got, tt.want) {
				t.Errorf("writes:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestGraphLinksAndVirtualOwners(t *testing.T) {
	g := newGraph()
	dep := objectReference{OwnerReference: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "dep", UID: "d1"}, Namespace: "ns"}
	e := g.observe(dep, []metav1.OwnerReference{ownerRef("owner", "o1", true)}, false, nil)
	if len(e.attemptToDelete) != 1 || e.attemptToDelete[0] != "o1" {
		t.Fatalf("a new virtual owner must be checked, got %v", e.attemptToDelete)
	}
	v, ok := g.view("o1")
	if !ok || !v.virtual || len(v.dependents) != 1 || !v.dependents[0].blocking {
		t.Fatalf("virtual owner view = %+v", v)
	}
	// The owner is observed: it is no longer virtual and keeps its dependent.
	owner := objectReference{OwnerReference: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "o1"}, Namespace: "ns"}
	g.observe(owner, nil, false, nil)
	if v, _ := g.view("o1"); v.virtual || len(v.dependents) != 1 {
		t.Fatalf("observed owner view = %+v", v)
	}
	// The dependent drops the reference: the owner has no dependents.
	g.observe(dep, nil, false, nil)
	if v, _ := g.view("o1"); len(v.dependents) != 0 {
		t.Fatalf("owner still has dependents: %+v", v)
	}
	if e := g.remove("d1"); len(e.attemptToDelete) != 0 || g.len() != 1 {
		t.Fatalf("remove: %+v, graph has %d nodes", e, g.len())
	}
}

func TestOwnerRefPatchIsValidJSON(t *testing.T) {
	h := newHarness(t, object("owner", "o1"), object("dep", "d1", ownerRef("owner", "o1", true), ownerRef("gone", "o9", true)))
	h.drain()
	for _, a := range h.client.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok {
			var v map[string]any
			if err := json.Unmarshal(p.Patch, &v); err != nil {
				t.Fatalf("patch is not JSON: %v", err)
			}
		}
	}
	got, err := h.client.Resource(configMaps).Namespace("ns").Get(context.Background(), "dep", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != "o1" {
		t.Errorf("dependent's owner references = %+v, want only o1", got.OwnerReferences)
	}
}

func TestDeletableResources(t *testing.T) {
	gc, err := NewController(fake.NewSimpleMetadataClient(fake.NewTestScheme()), fakeDiscovery(), nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(gc.discovery)
	if err != nil {
		t.Fatal(err)
	}
	got := gc.deletableResources(groups)
	want := map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "configmaps"}:                 "ConfigMap",
		{Group: "apps", Version: "v1", Resource: "replicasets"}: "ReplicaSet",
	}
	if len(got) != len(want) {
		t.Fatalf("deletable = %v, want %v", got, want)
	}
	for gvr, kind := range want {
		if got[gvr].Kind != kind {
			t.Errorf("%v -> %v, want kind %s", gvr, got[gvr], kind)
		}
	}
}

func fakeDiscovery() *fakediscovery.FakeDiscovery {
	all := metav1.Verbs{"create", "delete", "get", "list", "watch"}
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: all},
			{Name: "events", Namespaced: true, Kind: "Event", Verbs: all},
			{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
			{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get", "update"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "replicasets", Namespaced: true, Kind: "ReplicaSet", Verbs: all},
		}},
	}}}
}
