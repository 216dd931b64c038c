package kubelet

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus"

	"skiff.dev/kubelet/pkg/images"
	"skiff.dev/kubelet/pkg/pleg"
	"skiff.dev/kubelet/pkg/pod"
)

// Metrics are the kubelet's metrics, with upstream's names.
type Metrics struct {
	PodStartDuration prometheus.Histogram
	// PodStartSLIDuration is upstream's pod start SLI: from the pod's
	// creation to all its containers running, image pulls excluded.
	PodStartSLIDuration prometheus.Histogram
	// ImagePullDuration is upstream's kubelet_image_pull_duration_seconds:
	// successful pulls, by the image's size bucket.
	ImagePullDuration *prometheus.HistogramVec
	// RunPodSandboxDuration is upstream's
	// kubelet_run_podsandbox_duration_seconds: setting up a pod's sandbox
	// (skiff's: its network namespace and addresses), by runtime handler.
	RunPodSandboxDuration *prometheus.HistogramVec
	RuntimeOperations     *prometheus.HistogramVec
	RuntimeErrors         *prometheus.CounterVec
	// PLEG are upstream's kubelet_pleg_* metrics.
	PLEG *pleg.Metrics
}

// NewMetrics registers the metrics on reg; running counts the running pods.
func NewMetrics(reg prometheus.Registerer, running func() int) *Metrics {
	m := &Metrics{
		PodStartDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_start_duration_seconds",
			Help:    "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run",
			Buckets: []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600},
		}),
		PodStartSLIDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_start_sli_duration_seconds",
			Help:    "Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch",
			Buckets: []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600},
		}),
		ImagePullDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "image_pull_duration_seconds",
			Help:    "Duration in seconds to pull an image.",
			Buckets: []float64{1, 5, 10, 20, 30, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600},
		}, []string{"image_size_in_bytes"}),
		RunPodSandboxDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "run_podsandbox_duration_seconds",
			Help:    "Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.",
			Buckets: prometheus.DefBuckets,
		}, []string{"runtime_handler"}),
		RuntimeOperations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "runtime_operations_duration_seconds",
			Help:    "Duration in seconds of runtime operations. Broken down by operation type.",
			Buckets: prometheus.ExponentialBuckets(.005, 2.5, 14),
		}, []string{"operation_type"}),
		RuntimeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "runtime_operations_errors_total",
			Help: "Cumulative number of runtime operation errors by operation type.",
		}, []string{"operation_type"}),
	}
	reg.MustRegister(m.PodStartDuration, m.PodStartSLIDuration, m.ImagePullDuration, m.RunPodSandboxDuration, m.RuntimeOperations, m.RuntimeErrors,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "running_pods",
			Help: "Number of pods that have a running pod sandbox",
		}, func() float64 { return float64(running()) }))
	m.PLEG = pleg.NewMetrics(reg)
	return m
}

// instrumented times every runtime operation.
type instrumented struct {
	rt pod.Runtime
	m  *Metrics
}

// Instrument wraps a runtime so its operations are measured.
func Instrument(rt pod.Runtime, m *Metrics) pod.Runtime { return &instrumented{rt: rt, m: m} }

func (i *instrumented) observe(op string, start time.Time, err error) {
	i.m.RuntimeOperations.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil {
		i.m.RuntimeErrors.WithLabelValues(op).Inc()
	}
}

func (i *instrumented) GetImage(ctx context.Context, ref string) (img pod.Image, err error) {
	defer func(t time.Time) { i.observe("image_status", t, nil) }(time.Now())
	return i.rt.GetImage(ctx, ref)
}

func (i *instrumented) PullImage(ctx context.Context, ref string, creds []images.Credential) (img pod.Image, err error) {
	start := time.Now()
	defer func() { i.observe("pull_image", start, err) }()
	img, err = i.rt.PullImage(ctx, ref, creds)
	if err == nil {
		took := time.Since(start)
		if sz, ok := i.rt.(imageSizer); ok {
			if n, serr := sz.ImageSize(ctx, ref); serr == nil {
				i.m.ImagePullDuration.WithLabelValues(ImageSizeBucket(uint64(n))).Observe(took.Seconds())
			}
		}
	}
	return img, err
}

func (i *instrumented) CreateContainer(ctx context.Context, s pod.ContainerSpec) (err error) {
	defer func(t time.Time) { i.observe("create_container", t, err) }(time.Now())
	return i.rt.CreateContainer(ctx, s)
}

func (i *instrumented) StartContainer(ctx context.Context, id string) (err error) {
	defer func(t time.Time) { i.observe("start_container", t, err) }(time.Now())
	return i.rt.StartContainer(ctx, id)
}

func (i *instrumented) StopContainer(ctx context.Context, id string, grace time.Duration) (err error) {
	defer func(t time.Time) { i.observe("stop_container", t, err) }(time.Now())
	return i.rt.StopContainer(ctx, id, grace)
}

func (i *instrumented) RemoveContainer(ctx context.Context, id string) (err error) {
	defer func(t time.Time) { i.observe("remove_container", t, err) }(time.Now())
	return i.rt.RemoveContainer(ctx, id)
}

func (i *instrumented) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (code int32, out []byte, err error) {
	defer func(t time.Time) { i.observe("exec_sync", t, err) }(time.Now())
	return i.rt.Exec(ctx, id, cmd, timeout)
}

func (i *instrumented) ListContainers(ctx context.Context, podUID types.UID) (cs []pod.Container, err error) {
	defer func(t time.Time) { i.observe("list_containers", t, err) }(time.Now())
	return i.rt.ListContainers(ctx, podUID)
}

// imageSizer is a runtime that tells a local image's size (the containerd
// runtime).
type imageSizer interface {
	ImageSize(ctx context.Context, ref string) (int64, error)
}

// imageSizeBuckets are upstream's labels of kubelet_image_pull_duration_seconds
// by the lower bound of each.
var imageSizeBuckets = []struct {
	from  uint64
	label string
}{
	{0, "0-10MB"}, {10 << 20, "10MB-100MB"}, {100 << 20, "100MB-500MB"}, {500 << 20, "500MB-1GB"},
	{1 << 30, "1GB-5GB"}, {5 << 30, "5GB-10GB"}, {10 << 30, "10GB-20GB"}, {20 << 30, "20GB-30GB"},
	{30 << 30, "30GB-40GB"}, {40 << 30, "40GB-60GB"}, {60 << 30, "60GB-100GB"}, {100 << 30, "GT100GB"},
}

// ImageSizeBucket is the image_size_in_bytes label of an image of n bytes.
func ImageSizeBucket(n uint64) string {
	label := imageSizeBuckets[0].label
	for _, b := range imageSizeBuckets {
		if n >= b.from {
			label = b.label
		}
	}
	return label
}

// InstrumentNetwork wraps the pod network so that setting up a sandbox is
// measured as upstream's RunPodSandbox: kubelet_run_podsandbox_duration_seconds
// (runtime handler "", the default, as skiff has no RuntimeClass handlers)
// and the run_podsandbox runtime operation.
func InstrumentNetwork(n pod.Network, m *Metrics) pod.Network {
	return &instrumentedNetwork{Network: n, m: m}
}

type instrumentedNetwork struct {
	pod.Network
	m *Metrics
}

func (i *instrumentedNetwork) SetUp(ctx context.Context, pn pod.PodNetwork) (sb pod.Sandbox, err error) {
	start := time.Now()
	sb, err = i.Network.SetUp(ctx, pn)
	took := time.Since(start).Seconds()
	i.m.RuntimeOperations.WithLabelValues("run_podsandbox").Observe(took)
	if err != nil {
		i.m.RuntimeErrors.WithLabelValues("run_podsandbox").Inc()
		return sb, err
	}
	i.m.RunPodSandboxDuration.WithLabelValues("").Observe(took)
	return sb, nil
}

// Lost implements pod.SandboxChecker when the wrapped network does.
func (i *instrumentedNetwork) Lost(sb pod.Sandbox) bool {
	c, ok := i.Network.(pod.SandboxChecker)
	return ok && c.Lost(sb)
}
