package kubelet

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"skiff.dev/kubelet/pkg/images"
	"skiff.dev/kubelet/pkg/pod"
)

// sizedRuntime tells image sizes, as the containerd runtime does; a pull
// of "missing" fails.
type sizedRuntime struct {
	fakeRuntime
	size int64
}

func (s *sizedRuntime) PullImage(_ context.Context, ref string, _ []images.Credential) (pod.Image, error) {
	if ref == "missing" {
		return pod.Image{}, errors.New("not found")
	}
	return pod.Image{Ref: ref}, nil
}

func (s *sizedRuntime) ImageSize(context.Context, string) (int64, error) { return s.size, nil }

// A successful pull is observed in kubelet_image_pull_duration_seconds
// under its size's bucket, as upstream labels it; a failed one only in the
// runtime operation metrics.
func TestImagePullDuration(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, func() int { return 0 })
	rt := &sizedRuntime{size: 4 << 20}
	in := Instrument(rt, m)
	if _, err := in.PullImage(context.Background(), "busybox", nil); err != nil {
		t.Fatal(err)
	}
	rt.size = 200 << 20
	if _, err := in.PullImage(context.Background(), "big", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := in.PullImage(context.Background(), "missing", nil); err == nil {
		t.Fatal("no error")
	}
	if n := testutil.CollectAndCount(m.ImagePullDuration); n != 2 {
		t.Errorf("%d series, want one per size bucket", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	pulls := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "kubelet_image_pull_duration_seconds" {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "image_size_in_bytes" {
					pulls[l.GetValue()] = s.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	if len(pulls) != 2 || pulls["0-10MB"] != 1 || pulls["100MB-500MB"] != 1 {
		t.Errorf("pulls by size: %v", pulls)
	}
	if got := testutil.ToFloat64(m.RuntimeErrors.WithLabelValues("pull_image")); got != 1 {
		t.Errorf("pull errors %v", got)
	}
	for n, want := range map[uint64]string{0: "0-10MB", 10<<20 - 1: "0-10MB", 10 << 20: "10MB-100MB", 3 << 30: "1GB-5GB", 200 << 30: "GT100GB"} {
		if got := ImageSizeBucket(n); got != want {
			t.Errorf("ImageSizeBucket(%d) = %s, want %s", n, got, want)
		}
	}
}

// sandboxNetwork sets up sandboxes, or fails for the pod "bad"; its sandboxes
// are lost when lost is set.
type sandboxNetwork struct{ lost bool }

func (f *sandboxNetwork) SetUp(_ context.Context, pn pod.PodNetwork) (pod.Sandbox, error) {
	if pn.Name == "bad" {
		return pod.Sandbox{}, errors.New("cni: no address")
	}
	return pod.Sandbox{IPs: []string{"10.244.0.2"}}, nil
}
func (f *sandboxNetwork) TearDown(context.Context, pod.PodNetwork) error { return nil }
func (f *sandboxNetwork) Lost(pod.Sandbox) bool                          { return f.lost }

// Setting up a sandbox is observed in kubelet_run_podsandbox_duration_seconds
// (successes) and the run_podsandbox runtime operation (with its errors);
// the wrapper still tells a lost sandbox.
func TestRunPodSandboxDuration(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, func() int { return 0 })
	fn := &sandboxNetwork{lost: true}
	n := InstrumentNetwork(fn, m)
	if _, err := n.SetUp(context.Background(), pod.PodNetwork{Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.SetUp(context.Background(), pod.PodNetwork{Name: "bad"}); err == nil {
		t.Fatal("no error")
	}
	if got := testutil.CollectAndCount(m.RunPodSandboxDuration); got != 1 {
		t.Errorf("%d run_podsandbox series", got)
	}
	if got := testutil.ToFloat64(m.RuntimeErrors.WithLabelValues("run_podsandbox")); got != 1 {
		t.Errorf("run_podsandbox errors %v", got)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "kubelet_run_podsandbox_duration_seconds" {
			if c := mf.GetMetric()[0].GetHistogram().GetSampleCount(); c != 1 {
				t.Errorf("%d sandboxes observed, want the successful one", c)
			}
		}
	}
	if c, ok := n.(pod.SandboxChecker); !ok || !c.Lost(pod.Sandbox{}) {
		t.Error("the wrapped network's Lost is hidden")
	}
}
