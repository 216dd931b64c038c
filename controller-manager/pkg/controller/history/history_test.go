package history

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	appslisters "k8s.io/client-go/listers/apps/v1"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

var setKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

func newSet(name string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid")}}
}

func raw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

// newHistory returns the Interface over a fake client holding objs and a
// lister over the same revisions.
func newHistory(t *testing.T, objs ...*appsv1.ControllerRevision) (Interface, *fake.Clientset) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var robjs []runtime.Object
	for _, o := range objs {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
		robjs = append(robjs, o)
	}
	client := fake.NewSimpleClientset(robjs...)
	return NewHistory(client, appslisters.NewControllerRevisionLister(indexer)), client
}

func TestControllerRevisionName(t *testing.T) {
	tests := []struct {
		name, prefix, hash, want string
	}{
		{"short", "web", "abc", "web-abc"},
		{"long prefix cut to 223", strings.Repeat("a", 300), "h", strings.Repeat("a", 223) + "-h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ControllerRevisionName(tt.prefix, tt.hash); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewControllerRevision(t *testing.T) {
	set := newSet("web")
	cr := NewControllerRevision(set, setKind, map[string]string{"app": "web"}, raw(`{"spec":1}`), 3, nil)
	hash := cr.Labels[ControllerRevisionHashLabel]
	if hash == "" || cr.Name != "web-"+hash || cr.Labels["app"] != "web" || cr.Revision != 3 || cr.Namespace != "ns" {
		t.Fatalf("revision = %+v", cr.ObjectMeta)
	}
	ref := metav1.GetControllerOf(cr)
	if ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" || ref.APIVersion != "apps/v1" {
		t.Errorf("controller ref = %+v", ref)
	}
	same := NewControllerRevision(set, setKind, nil, raw(`{"spec":1}`), 4, nil)
	if same.Name != cr.Name {
		t.Errorf("same data: name %q, want %q", same.Name, cr.Name)
	}
	other := NewControllerRevision(set, setKind, nil, raw(`{"spec":2}`), 4, nil)
	if other.Name == cr.Name {
		t.Errorf("other data: same name %q", other.Name)
	}
	one := int32(1)
	probed := NewControllerRevision(set, setKind, nil, raw(`{"spec":1}`), 4, &one)
	if probed.Name == cr.Name {
		t.Errorf("collisionCount 1: same name %q", probed.Name)
	}
}

func TestHashControllerRevision(t *testing.T) {
	// FNV-32 (not 32a) of the bytes, then the probe in decimal, as
	// upstream: FNV-32 of "" is 2166136261.
	empty := &appsv1.ControllerRevision{}
	if got, want := HashControllerRevision(empty, nil), "65bb57b6b5"; got != want {
		// rand.SafeEncodeString("2166136261")
		t.Errorf("hash of nothing = %q, want %q", got, want)
	}
	// Data.Object is hashed as a deep print of its value.
	a := &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{ServiceName: "a"}}}}
	b := &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{ServiceName: "a"}}}}
	c := &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{ServiceName: "b"}}}}
	if HashControllerRevision(a, nil) != HashControllerRevision(b, nil) || HashControllerRevision(a, nil) == HashControllerRevision(c, nil) {
		t.Error("object hashes do not follow the object's value")
	}
}

func revision(name string, rev int64, data string, owner *appsv1.StatefulSet, lbls map[string]string) *appsv1.ControllerRevision {
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid"), Labels: lbls},
		Data:       raw(data), Revision: rev,
	}
	if owner != nil {
		cr.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, setKind)}
	}
	return cr
}

func TestListControllerRevisions(t *testing.T) {
	set, other := newSet("web"), newSet("other")
	app := map[string]string{"app": "web"}
	h, _ := newHistory(t,
		revision("owned", 1, "a", set, app),
		revision("orphan", 2, "b", nil, app),
		revision("others", 3, "c", other, app),
		revision("unmatched", 4, "d", set, map[string]string{"app": "db"}),
	)
	got, err := h.ListControllerRevisions(set, labels.SelectorFromSet(app))
	if err != nil {
		t.Fatal(err)
	}
	SortControllerRevisions(got)
	if names := names(got); strings.Join(names, ",") != "owned,orphan" {
		t.Errorf("listed %v, want [owned orphan]", names)
	}
}

func names(revs []*appsv1.ControllerRevision) []string {
	var out []string
	for _, r := range revs {
		out = append(out, r.Name)
	}
	return out
}

func TestCreateControllerRevision(t *testing.T) {
	set := newSet("web")
	ctx := context.Background()
	tests := []struct {
		name          string
		existing      func(want *appsv1.ControllerRevision) *appsv1.ControllerRevision
		wantCollision int32
		wantCreates   int
		wantSameName  bool
	}{
		{name: "new", wantCreates: 1, wantSameName: true},
		{
			name: "same data exists: reuse it",
			existing: func(want *appsv1.ControllerRevision) *appsv1.ControllerRevision {
				return revision(want.Name, 7, "data", set, nil)
			},
			wantCreates: 1, wantSameName: true,
		},
		{
			name: "other data under the name: collision",
			existing: func(want *appsv1.ControllerRevision) *appsv1.ControllerRevision {
				return revision(want.Name, 7, "something else", set, nil)
			},
			wantCollision: 1, wantCreates: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var collision int32
			cr := NewControllerRevision(set, setKind, map[string]string{"app": "web"}, raw("data"), 2, &collision)
			var objs []*appsv1.ControllerRevision
			if tt.existing != nil {
				objs = append(objs, tt.existing(cr))
			}
			h, client := newHistory(t, objs...)
			got, err := h.CreateControllerRevision(ctx, set, cr, &collision)
			if err != nil {
				t.Fatal(err)
			}
			if collision != tt.wantCollision {
				t.Errorf("collisionCount = %d, want %d", collision, tt.wantCollision)
			}
			if (got.Name == cr.Name) != tt.wantSameName {
				t.Errorf("name %q (first choice %q), want same = %v", got.Name, cr.Name, tt.wantSameName)
			}
			if got.Name != "web-"+got.Labels[ControllerRevisionHashLabel] && tt.existing == nil {
				t.Errorf("name %q does not match its hash label %q", got.Name, got.Labels[ControllerRevisionHashLabel])
			}
			probe := collision
			if want := ControllerRevisionName("web", HashControllerRevision(cr, &probe)); tt.wantCollision > 0 && got.Name != want {
				t.Errorf("after collision: name %q, want %q", got.Name, want)
			}
			creates := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" {
					creates++
				}
			}
			if creates != tt.wantCreates {
				t.Errorf("creates = %d, want %d (actions %v)", creates, tt.wantCreates, client.Actions())
			}
		})
	}
	h, _ := newHistory(t)
	if _, err := h.CreateControllerRevision(ctx, set, &appsv1.ControllerRevision{}, nil); err == nil {
		t.Error("nil collisionCount: want an error")
	}
}

func TestUpdateControllerRevision(t *testing.T) {
	set := newSet("web")
	cr := revision("web-1", 1, "a", set, nil)
	h, client := newHistory(t, cr)
	conflicts := 1
	client.PrependReactor("update", "controllerrevisions", func(core.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(appsv1.Resource("controllerrevisions"), "web-1", nil)
		}
		return false, nil, nil
	})
	got, err := h.UpdateControllerRevision(context.Background(), cr, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 5 {
		t.Errorf("revision = %d, want 5", got.Revision)
	}
	stored, _ := client.AppsV1().ControllerRevisions("ns").Get(context.Background(), "web-1", metav1.GetOptions{})
	if stored.Revision != 5 {
		t.Errorf("stored revision = %d, want 5", stored.Revision)
	}
	if cr.Revision != 1 {
		t.Error("the argument was modified")
	}
	client.ClearActions()
	if _, err := h.UpdateControllerRevision(context.Background(), stored, 5); err != nil || len(client.Actions()) != 0 {
		t.Errorf("same number: err %v, actions %v, want no call", err, client.Actions())
	}
}

func TestDeleteControllerRevision(t *testing.T) {
	cr := revision("web-1", 1, "a", newSet("web"), nil)
	h, client := newHistory(t, cr)
	if err := h.DeleteControllerRevision(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().ControllerRevisions("ns").Get(context.Background(), "web-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: get err = %v", err)
	}
}

func TestAdoptAndReleaseControllerRevision(t *testing.T) {
	ctx := context.Background()
	set := newSet("web")
	orphan := revision("web-1", 1, `{"a":1}`, nil, nil)
	h, client := newHistory(t, orphan)
	adopted, err := h.AdoptControllerRevision(ctx, set, setKind, orphan)
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(adopted)
	if ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Fatalf("adopted owner = %+v", adopted.OwnerReferences)
	}
	if a := client.Actions()[0]; a.GetVerb() != "patch" || a.(core.PatchAction).GetPatchType() != types.StrategicMergePatchType ||
		!strings.Contains(string(a.(core.PatchAction).GetPatch()), `"uid":"web-1-uid"`) {
		t.Errorf("adopt action = %#v, want a strategic merge patch with the revision's uid", a)
	}
	if _, err := h.AdoptControllerRevision(ctx, newSet("other"), setKind, adopted); err == nil {
		t.Error("adopting an owned revision: want an error")
	}
	released, err := h.ReleaseControllerRevision(ctx, set, adopted)
	if err != nil {
		t.Fatal(err)
	}
	if len(released.OwnerReferences) != 0 {
		t.Errorf("released owners = %+v", released.OwnerReferences)
	}
	gone := revision("gone", 1, "a", set, nil)
	if got, err := h.ReleaseControllerRevision(ctx, set, gone); got != nil || err != nil {
		t.Errorf("release of a missing revision = %v, %v; want nil, nil", got, err)
	}
}

func TestFindEqualRevisions(t *testing.T) {
	set := newSet("web")
	a := NewControllerRevision(set, setKind, nil, raw("a"), 1, nil)
	b := NewControllerRevision(set, setKind, nil, raw("b"), 2, nil)
	a2 := revision("copy-of-a", 3, "a", set, nil)
	tests := []struct {
		name   string
		needle *appsv1.ControllerRevision
		want   string
	}{
		{"a matches a and its copy", a, a.Name + ",copy-of-a"},
		{"b matches b", b, b.Name},
		{"nothing matches c", revision("c", 1, "c", nil, nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(names(FindEqualRevisions([]*appsv1.ControllerRevision{a, b, a2}, tt.needle)), ",")
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSortControllerRevisions(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(100, 0))
	t1 := metav1.NewTime(time.Unix(200, 0))
	mk := func(name string, rev int64, ts metav1.Time) *appsv1.ControllerRevision {
		r := revision(name, rev, "", nil, nil)
		r.CreationTimestamp = ts
		return r
	}
	revs := []*appsv1.ControllerRevision{mk("c", 2, t0), mk("b", 1, t1), mk("a", 1, t1), mk("d", 1, t0)}
	SortControllerRevisions(revs)
	if got := strings.Join(names(revs), ","); got != "d,a,b,c" {
		t.Errorf("order = %s, want d,a,b,c", got)
	}
	if NextRevision(revs) != 3 || NextRevision(nil) != 1 {
		t.Errorf("NextRevision = %d / %d, want 3 / 1", NextRevision(revs), NextRevision(nil))
	}
}
