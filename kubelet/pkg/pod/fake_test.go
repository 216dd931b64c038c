package pod

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/kubelet/pkg/images"
)

// fakeRuntime is an in-memory Runtime. Containers "run" until exit() is
// called for them; calls are recorded in order.
type fakeRuntime struct {
	mu         sync.Mutex
	images     map[string]Image // local images
	registry   map[string]Image // pullable images
	containers map[string]*Container
	calls      []string
	now        func() time.Time
	startErr   error
	execCode   *int32
	// execCodes, when set, give the exit code of a command (joined
	// with spaces), before execCode.
	execCodes map[string]int32
	// execHangs are commands (joined with spaces) that run until their
	// context ends, as a hook that hangs.
	execHangs map[string]bool
	stopErr   error
	// stopWaits makes a stop wait out its grace period (a container that
	// ignores SIGTERM) unless its context ends first.
	stopWaits bool
	// onCreate, when set, sees each container spec created.
	onCreate func(ContainerSpec)
	// onPull, when set, runs during each pull (to let time pass).
	onPull func()
	// pullHangs makes pulls run until their context ends.
	pullHangs bool
	// lostAfterPull images are removed again right after their pull, as
	// an image garbage collector may do before the container is created.
	lostAfterPull int
}

func newFakeRuntime(now func() time.Time) *fakeRuntime {
	return &fakeRuntime{
		images:     map[string]Image{},
		registry:   map[string]Image{"docker.io/library/busybox:latest": {Ref: "docker.io/library/busybox:latest", ID: "docker.io/library/busybox@sha256:1"}},
		containers: map[string]*Container{},
		now:        now,
	}
}

func (f *fakeRuntime) record(s string) {
	f.calls = append(f.calls, s)
}

func (f *fakeRuntime) GetImage(_ context.Context, ref string) (Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if img, ok := f.images[ref]; ok {
		return img, nil
	}
	return Image{}, ErrImageNotFound
}

func (f *fakeRuntime) PullImage(ctx context.Context, ref string, _ []images.Credential) (Image, error) {
	f.mu.Lock()
	f.record("pull " + ref)
	if f.pullHangs {
		f.mu.Unlock()
		<-ctx.Done()
		return Image{}, ctx.Err()
	}
	defer f.mu.Unlock()
	if f.onPull != nil {
		f.onPull()
	}
	img, ok := f.registry[ref]
	if !ok {
		return Image{}, fmt.Errorf("%s: not found", ref)
	}
	f.images[ref] = img
	if f.lostAfterPull > 0 {
		f.lostAfterPull--
		delete(f.images, ref)
	}
	return img, nil
}

func (f *fakeRuntime) CreateContainer(_ context.Context, s ContainerSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("create " + s.Labels[LabelContainerName] + " " + s.Labels[LabelAttempt] + " env=" + strings.Join(s.Env, ","))
	if f.onCreate != nil {
		f.onCreate(s)
	}
	if _, ok := f.images[s.Image]; !ok {
		return fmt.Errorf("image %s: %w", s.Image, ErrImageNotFound)
	}
	f.containers[s.ID] = &Container{ID: s.ID, Labels: s.Labels, State: StateCreated, Image: s.Image, ImageID: f.images[s.Image].ID, CreatedAt: f.now()}
	return nil
}

func (f *fakeRuntime) StartContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[id]
	f.record("start " + c.Name() + " " + c.Labels[LabelAttempt])
	if f.startErr != nil {
		return f.startErr
	}
	c.State, c.StartedAt = StateRunning, f.now()
	return nil
}

func (f *fakeRuntime) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[id]
	f.record(fmt.Sprintf("stop %s %s", c.Name(), grace))
	if f.stopErr != nil {
		return f.stopErr
	}
	if f.stopWaits {
		f.mu.Unlock()
		t := time.NewTimer(grace)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		f.mu.Lock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	c.State, c.ExitCode, c.FinishedAt = StateExited, 137, f.now()
	return nil
}

func (f *fakeRuntime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; ok {
		f.record("remove " + c.Name() + " " + c.Labels[LabelAttempt])
	}
	delete(f.containers, id)
	return nil
}

func (f *fakeRuntime) ListContainers(_ context.Context, uid types.UID) ([]Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Container
	for _, c := range f.containers {
		if uid != "" && c.PodUID() != uid {
			continue
		}
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (f *fakeRuntime) Exec(ctx context.Context, id string, cmd []string, _ time.Duration) (int32, []byte, error) {
	f.mu.Lock()
	f.record("exec " + strings.Join(cmd, " "))
	if f.execHangs[strings.Join(cmd, " ")] {
		f.mu.Unlock()
		<-ctx.Done()
		return 0, nil, ctx.Err()
	}
	defer f.mu.Unlock()
	if code, ok := f.execCodes[strings.Join(cmd, " ")]; ok {
		return code, []byte("out"), nil
	}
	if f.execCode != nil {
		return *f.execCode, []byte("out"), nil
	}
	return 0, nil, nil
}

// exit makes the running container with name exit with code.
func (f *fakeRuntime) exit(name string, code int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.containers {
		if c.Name() == name && c.State == StateRunning {
			c.State, c.ExitCode, c.FinishedAt = StateExited, code, f.now()
		}
	}
}

func (f *fakeRuntime) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.containers)
}

func (f *fakeRuntime) callsWith(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// fakeNetwork hands out 10.0.0.x addresses.
type fakeNetwork struct {
	mu       sync.Mutex
	next     int
	sandbox  map[string]Sandbox
	setUpErr error
	downErr  error
	log      *[]string
}

func newFakeNetwork() *fakeNetwork {
	return &fakeNetwork{sandbox: map[string]Sandbox{}, log: &[]string{}}
}

func (n *fakeNetwork) SetUp(_ context.Context, pn PodNetwork) (Sandbox, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	*n.log = append(*n.log, "network up")
	if n.setUpErr != nil {
		return Sandbox{}, n.setUpErr
	}
	n.next++
	sb := Sandbox{NetNSPath: "/netns/" + string(pn.UID), IPs: []string{fmt.Sprintf("10.0.0.%d", n.next)}}
	n.sandbox[string(pn.UID)] = sb
	return sb, nil
}

func (n *fakeNetwork) TearDown(_ context.Context, pn PodNetwork) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	*n.log = append(*n.log, "network down")
	if n.downErr != nil {
		return n.downErr
	}
	delete(n.sandbox, string(pn.UID))
	return nil
}

// downs counts the teardowns so far.
func (n *fakeNetwork) downs() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, l := range *n.log {
		if l == "network down" {
			c++
		}
	}
	return c
}

// Lost implements SandboxChecker: a sandbox is lost once lose removed it.
func (n *fakeNetwork) Lost(sb Sandbox) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, have := range n.sandbox {
		if have.NetNSPath == sb.NetNSPath && reflect.DeepEqual(have.IPs, sb.IPs) {
			return false
		}
	}
	return true
}

// lose removes a pod's namespace behind the kubelet's back.
func (n *fakeNetwork) lose(uid string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.sandbox, uid)
}

// fakeObjects serves config maps and secrets from maps.
type fakeObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func (o fakeObjects) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if cm, ok := o.configMaps[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (o fakeObjects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if s, ok := o.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

// fakeStatus records what the worker sends.
type fakeStatus struct {
	mu       sync.Mutex
	statuses []corev1.PodStatus
	deleted  int
}

func (s *fakeStatus) UpdateStatus(_ context.Context, _ *corev1.Pod, st corev1.PodStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, st)
	return nil
}

func (s *fakeStatus) Delete(context.Context, *corev1.Pod) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleted++
	return nil
}

func (s *fakeStatus) last() corev1.PodStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.statuses) == 0 {
		return corev1.PodStatus{}
	}
	return s.statuses[len(s.statuses)-1]
}

// clock is a manual clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var errBoom = errors.New("boom")
