package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/kubelet/pkg/images"
	"skiff.dev/kubelet/pkg/pod"
)

type fakeRuntime struct {
	mu         sync.Mutex
	containers []pod.Container
	calls      []string
}

func (f *fakeRuntime) GetImage(context.Context, string) (pod.Image, error) { return pod.Image{}, nil }
func (f *fakeRuntime) PullImage(context.Context, string, []images.Credential) (pod.Image, error) {
	return pod.Image{}, nil
}
func (f *fakeRuntime) CreateContainer(context.Context, pod.ContainerSpec) error {
	return nil
}
func (f *fakeRuntime) StartContainer(context.Context, string) error { return nil }
func (f *fakeRuntime) StopContainer(_ context.Context, id string, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "stop "+id)
	return nil
}
func (f *fakeRuntime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "remove "+id)
	for i, c := range f.containers {
		if c.ID == id {
			f.containers = append(f.containers[:i], f.containers[i+1:]...)
			break
		}
	}
	return nil
}
func (f *fakeRuntime) Exec(context.Context, string, []string, time.Duration) (int32, []byte, error) {
	return 0, nil, nil
}
func (f *fakeRuntime) ListContainers(context.Context, types.UID) ([]pod.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pod.Container{}, f.containers...), nil
}

type fakeNetwork struct {
	sandboxes []types.UID
	torn      []types.UID
	// listed runs when the sandboxes are listed: a pod arriving meanwhile.
	listed func()
}

func (n *fakeNetwork) SetUp(context.Context, pod.PodNetwork) (pod.Sandbox, error) {
	return pod.Sandbox{}, nil
}
func (n *fakeNetwork) TearDown(_ context.Context, pn pod.PodNetwork) error {
	n.torn = append(n.torn, pn.UID)
	return nil
}
func (n *fakeNetwork) Sandboxes() ([]types.UID, error) {
	if n.listed != nil {
		n.listed()
	}
	return n.sandboxes, nil
}

type noMounts struct{}

func (noMounts) MountTmpfs(string, int64, os.FileMode) error { return nil }
func (noMounts) Unmount(string) error                        { return nil }

func TestCleanupOrphans(t *testing.T) {
	ctr := func(id, uid string, state pod.ContainerState) pod.Container {
		return pod.Container{ID: id, State: state, Labels: map[string]string{pod.LabelPodUID: uid, pod.LabelContainerName: "c"}}
	}
	rt := &fakeRuntime{containers: []pod.Container{
		ctr("kept", "current", pod.StateRunning),
		ctr("orphan-running", "gone", pod.StateRunning),
		ctr("orphan-exited", "gone", pod.StateExited),
	}}
	nw := &fakeNetwork{sandboxes: []types.UID{"current", "gone", "gone-too"}}
	podsDir, logsDir := t.TempDir(), t.TempDir()
	for _, d := range []string{
		filepath.Join(podsDir, "current", "volumes"), filepath.Join(podsDir, "gone-dir", "volumes", "empty-dir", "x"),
		filepath.Join(logsDir, "current", "c"), filepath.Join(logsDir, "gone", "c"),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lc := &pod.Lifecycle{Hooks: []pod.Hook{
		&pod.NetworkHook{Network: nw},
		&pod.VolumesHook{Dir: podsDir, Mounter: noMounts{}},
		&pod.ContainersHook{Runtime: rt, LogDir: logsDir},
	}}
	k := New(Options{NodeName: "n", Runtime: rt, Network: nw, Lifecycle: lc, PodDirs: []string{podsDir, logsDir}})
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	_ = store.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "current"}})
	if err := k.cleanupOrphans(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	sort.Strings(rt.calls)
	want := []string{"remove orphan-exited", "remove orphan-running", "stop orphan-running"}
	if !reflect.DeepEqual(rt.calls, want) {
		t.Errorf("runtime calls = %v, want %v", rt.calls, want)
	}
	sort.Slice(nw.torn, func(i, j int) bool { return nw.torn[i] < nw.torn[j] })
	if !reflect.DeepEqual(nw.torn, []types.UID{"gone", "gone-dir", "gone-too"}) {
		t.Errorf("torn down = %v", nw.torn)
	}
	for _, d := range []string{filepath.Join(podsDir, "gone-dir"), filepath.Join(logsDir, "gone")} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left", d)
		}
	}
	for _, d := range []string{filepath.Join(podsDir, "current"), filepath.Join(logsDir, "current")} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s of a current pod removed", d)
		}
	}
}

// A pod that arrives while the orphans are listed, and whose worker has
// already set up its sandbox, is not an orphan; neither is a pod gone from
// the store whose worker is still tearing it down. The first was torn down
// under its worker once: its container could never start, for its network
// namespace was gone.
func TestCleanupOrphansSparesPodsThatArriveMeanwhile(t *testing.T) {
	nw := &fakeNetwork{sandboxes: []types.UID{"arrived", "leaving", "gone"}}
	rt := &fakeRuntime{}
	lc := &pod.Lifecycle{Hooks: []pod.Hook{&pod.NetworkHook{Network: nw}}}
	k := New(Options{NodeName: "n", Runtime: rt, Network: nw, Lifecycle: lc})
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	nw.listed = func() {
		_ = store.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "arrived", Namespace: "ns", UID: "arrived"}})
	}
	leaving := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "leaving", Namespace: "ns", UID: "leaving"}}
	k.workers[leaving.UID] = pod.NewWorker(k.cfg, leaving)
	if err := k.cleanupOrphans(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(nw.torn, []types.UID{"gone"}) {
		t.Errorf("torn down = %v, want only gone", nw.torn)
	}
}

func TestMergeConditions(t *testing.T) {
	old := []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: "example.com/gate", Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse},
	}
	mine := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	got := mergeConditions(old, mine)
	want := []corev1.PodCondition{mine[0], mine[1], old[1]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged = %v, want %v", got, want)
	}
}
