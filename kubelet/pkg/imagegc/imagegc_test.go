package imagegc

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeRuntime holds images and the images containers use.
type fakeRuntime struct {
	mu       sync.Mutex
	images   map[string]Image
	inUse    []string
	removed  []string
	failOn   map[string]bool
	fs       FsStats
	fsErr    error
	fsCalls  int
	freeOnRm bool // removing an image adds its size to fs.Available
}

func newFakeRuntime(images ...Image) *fakeRuntime {
	r := &fakeRuntime{images: map[string]Image{}, failOn: map[string]bool{}, freeOnRm: true}
	for _, img := range images {
		r.images[img.ID] = img
	}
	return r
}

func (r *fakeRuntime) ListImages(context.Context) ([]Image, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Image
	for _, img := range r.images {
		out = append(out, img)
	}
	return out, nil
}

func (r *fakeRuntime) ImagesInUse(context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.inUse...), nil
}

func (r *fakeRuntime) RemoveImage(_ context.Context, img Image) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failOn[img.ID] {
		return errors.New("image is busy")
	}
	for _, id := range r.inUse {
		if id == img.ID {
			return errors.New("BUG: removing an image in use")
		}
	}
	delete(r.images, img.ID)
	r.removed = append(r.removed, img.ID)
	if r.freeOnRm {
		r.fs.Available += img.Size
	}
	return nil
}

func (r *fakeRuntime) imageFS(context.Context) (FsStats, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fsCalls++
	return r.fs, r.fsErr
}

func (r *fakeRuntime) use(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inUse = ids
}

func (r *fakeRuntime) add(img Image) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.images[img.ID] = img
}

func (r *fakeRuntime) removedIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.removed...)
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var nodeRef = &corev1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-1"}

func newTestManager(t *testing.T, rt *fakeRuntime) (*Manager, *testingclock.FakeClock, *record.FakeRecorder, *prometheus.Registry) {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	rec := record.NewFakeRecorder(10)
	reg := prometheus.NewRegistry()
	m, err := New(Options{
		Policy: *NewPolicy(), Runtime: rt, ImageFS: rt.imageFS, Recorder: rec, NodeRef: nodeRef,
		Registerer: reg, Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, clk, rec, reg
}

func detect(t *testing.T, m *Manager) {
	t.Helper()
	if _, err := m.Detect(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// history builds upstream's situation: at t0 images e, a, b, c exist and
// a and c are used; at t0+1m b and c are used; at t0+2m d appears; at
// t0+3m only c is used. The order to remove is e (never used), a (used at
// t0), b (used at t0+1m); d is too young and c is in use.
func history(t *testing.T, rt *fakeRuntime, m *Manager, clk *testingclock.FakeClock) {
	t.Helper()
	rt.use("a", "c")
	detect(t, m)
	clk.Step(time.Minute)
	rt.use("b", "c")
	detect(t, m)
	clk.Step(time.Minute)
	rt.add(Image{ID: "d", Size: 500})
	detect(t, m)
	clk.Step(time.Minute)
	rt.use("c")
}

func images() []Image {
	return []Image{{ID: "e", Size: 60}, {ID: "a", Size: 50}, {ID: "b", Size: 70}, {ID: "c", Size: 500}}
}

func TestGarbageCollect(t *testing.T) {
	tests := []struct {
		name        string
		available   int64 // of 1000 bytes
		pinned      string
		failOn      string
		wantRemoved []string
		wantErr     string
		wantEvent   string
	}{
		{name: "below the high threshold nothing is removed", available: 160},
		// 90% used: free 1000*20% - 100 = 100 bytes: e (60) then a (50).
		{name: "stops at the low threshold", available: 100, wantRemoved: []string{"e", "a"}},
		// exactly 85% used: collect down to 80%: 50 bytes: e.
		{name: "at the high threshold", available: 150, wantRemoved: []string{"e"}},
		{name: "pinned images are kept", available: 100, pinned: "e", wantRemoved: []string{"a", "b"}},
		{name: "a failed removal does not stop the others", available: 100, failOn: "e",
			wantRemoved: []string{"a", "b"}, wantErr: "errors in image deletion: image is busy"},
		// 99% used: 190 bytes wanted, only e, a, b (180) may go.
		{name: "not enough eligible", available: 10, wantRemoved: []string{"e", "a", "b"},
			wantErr:   "Attempted to free 190 bytes, but only found 180 bytes eligible to free.",
			wantEvent: "Warning FreeDiskSpaceFailed Failed to garbage collect required amount of images. Attempted to free 190 bytes, but only found 180 bytes eligible to free."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imgs := images()
			for i := range imgs {
				imgs[i].Pinned = imgs[i].ID == tt.pinned
			}
			rt := newFakeRuntime(imgs...)
			rt.fs = FsStats{Capacity: 1000, Available: tt.available}
			if tt.failOn != "" {
				rt.failOn[tt.failOn] = true
			}
			m, clk, rec, reg := newTestManager(t, rt)
			history(t, rt, m, clk)
			err := m.GarbageCollect(context.Background())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if got := rt.removedIDs(); !reflect.DeepEqual(got, tt.wantRemoved) {
				t.Errorf("removed %v, want %v", got, tt.wantRemoved)
			}
			var wantEvents []string
			if tt.wantEvent != "" {
				wantEvents = []string{tt.wantEvent}
			}
			if got := events(rec); !reflect.DeepEqual(got, wantEvents) {
				t.Errorf("events %q, want %q", got, wantEvents)
			}
			if got := testutil.ToFloat64(m.collected.WithLabelValues("space")); got != float64(len(tt.wantRemoved)) {
				t.Errorf("kubelet_image_garbage_collected_total = %v, want %d", got, len(tt.wantRemoved))
			}
			if len(tt.wantRemoved) > 0 {
				if n, err := testutil.GatherAndCount(reg, "kubelet_image_garbage_collected_total"); err != nil || n != 1 {
					t.Errorf("metric not registered on the registry: %d series, %v", n, err)
				}
			}
		})
	}
}

func TestGarbageCollectYoungImagesAreKeptUntilOldEnough(t *testing.T) {
	rt := newFakeRuntime(images()...)
	rt.fs = FsStats{Capacity: 1000, Available: 0}
	rt.freeOnRm = false // the disk stays full
	m, clk, _, _ := newTestManager(t, rt)
	history(t, rt, m, clk)
	_ = m.GarbageCollect(context.Background())
	if got := rt.removedIDs(); !reflect.DeepEqual(got, []string{"e", "a", "b"}) {
		t.Fatalf("removed %v, want e, a, b (d is 1 minute old)", got)
	}
	clk.Step(time.Minute) // d is 2 minutes old now
	_ = m.GarbageCollect(context.Background())
	if got := rt.removedIDs(); !reflect.DeepEqual(got, []string{"e", "a", "b", "d"}) {
		t.Fatalf("removed %v, want e, a, b, then d", got)
	}
}

func TestGarbageCollectInvalidCapacity(t *testing.T) {
	rt := newFakeRuntime(images()...)
	m, _, rec, _ := newTestManager(t, rt)
	err := m.GarbageCollect(context.Background())
	if err == nil || err.Error() != "invalid capacity 0 on image filesystem" {
		t.Fatalf("error %v", err)
	}
	if got := events(rec); !reflect.DeepEqual(got, []string{"Warning InvalidDiskCapacity invalid capacity 0 on image filesystem"}) {
		t.Errorf("events %q", got)
	}
}

func TestDeleteUnusedImages(t *testing.T) {
	rt := newFakeRuntime(images()...)
	rt.fs = FsStats{Capacity: 1000, Available: 900} // usage does not matter
	m, clk, _, _ := newTestManager(t, rt)
	history(t, rt, m, clk)
	if err := m.DeleteUnusedImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rt.removedIDs()
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"a", "b", "e"}) {
		t.Errorf("removed %v, want a, b, e (c in use, d too young)", got)
	}
}

func TestImagesInUseAreNeverRemoved(t *testing.T) {
	rt := newFakeRuntime(Image{ID: "x", Size: 100}, Image{ID: "y", Size: 100})
	rt.fs = FsStats{Capacity: 1000, Available: 0}
	m, clk, _, _ := newTestManager(t, rt)
	detect(t, m)
	clk.Step(time.Hour)
	rt.use("x", "y") // used since the last detection only
	if err := m.DeleteUnusedImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rt.removedIDs(); len(got) != 0 {
		t.Errorf("removed %v, want nothing", got)
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name    string
		p       Policy
		wantErr string
	}{
		{name: "defaults", p: *NewPolicy()},
		{name: "100 disables", p: Policy{HighThresholdPercent: 100, LowThresholdPercent: 80}},
		{name: "high above 100", p: Policy{HighThresholdPercent: 101}, wantErr: "--image-gc-high-threshold 101"},
		{name: "negative low", p: Policy{HighThresholdPercent: 85, LowThresholdPercent: -1}, wantErr: "--image-gc-low-threshold -1"},
		{name: "low above high", p: Policy{HighThresholdPercent: 70, LowThresholdPercent: 80}, wantErr: "can not be higher than"},
		{name: "negative age", p: Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: -time.Second}, wantErr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
	if _, err := New(Options{Policy: Policy{HighThresholdPercent: 101}, Runtime: newFakeRuntime(), ImageFS: StatFS("/")}); err == nil {
		t.Error("New accepted an invalid policy")
	}
	if _, err := New(Options{Policy: *NewPolicy()}); err == nil {
		t.Error("New accepted no runtime")
	}
}

func TestStatFS(t *testing.T) {
	fs, err := StatFS(t.TempDir())(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fs.Capacity <= 0 || fs.Available < 0 || fs.Available > fs.Capacity {
		t.Errorf("implausible %+v", fs)
	}
	if _, err := StatFS("/nonexistent-skiff")(context.Background()); err == nil {
		t.Error("no error for a missing path")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestStartRecordsImageGCFailedOnRepeatedFailure(t *testing.T) {
	rt := newFakeRuntime()
	rt.fsErr = errors.New("no stats yet")
	m, clk, rec, _ := newTestManager(t, rt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	calls := func() int {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.fsCalls
	}
	waitFor(t, "the first collection", func() bool { return calls() == 1 && clk.HasWaiters() })
	if got := events(rec); len(got) != 0 {
		t.Fatalf("events after one failure: %q", got)
	}
	clk.Step(Period - time.Second)
	if calls() != 1 {
		t.Fatal("collected before 5 minutes")
	}
	clk.Step(time.Second)
	waitFor(t, "the second collection", func() bool { return calls() == 2 && clk.HasWaiters() })
	got := events(rec)
	if len(got) != 1 || !strings.HasPrefix(got[0], "Warning ImageGCFailed reading the image filesystem: no stats yet") {
		t.Errorf("events %q, want one ImageGCFailed", got)
	}
}

func TestStartDisabledAtHighThreshold100(t *testing.T) {
	rt := newFakeRuntime()
	m, err := New(Options{
		Policy: Policy{HighThresholdPercent: 100, LowThresholdPercent: 80}, Runtime: rt, ImageFS: rt.imageFS,
		Clock: testingclock.NewFakeClock(t0),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if rt.fsCalls != 0 {
		t.Errorf("collected %d times with collection disabled", rt.fsCalls)
	}
}
