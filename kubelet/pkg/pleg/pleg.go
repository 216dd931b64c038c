// Package pleg is the kubelet's pod lifecycle event generator, as
// upstream's GenericPLEG (pkg/kubelet/pleg): one goroutine lists every
// container of the runtime once per period, keeps what it saw per pod,
// and tells the pod workers whose containers changed. The workers read
// their containers from this cache instead of asking the runtime each
// themselves, so an idle node costs one runtime listing per period
// whatever its number of pods.
package pleg

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/pod"
)

// RelistThreshold is how long the PLEG may go without a relist before it
// is unhealthy, as upstream's.
const RelistThreshold = 3 * time.Minute

// Lister lists the runtime's containers (every pod's when podUID is empty).
type Lister interface {
	ListContainers(ctx context.Context, podUID types.UID) ([]pod.Container, error)
}

// Options configure a PLEG.
type Options struct {
	Runtime Lister
	// Period is the time between relists (1 s when 0, as upstream's).
	Period time.Duration
	// OnChange is called, outside any lock, with every pod whose
	// containers changed in a relist (appeared, went, or changed state).
	OnChange func(types.UID)
	// Metrics, when set, are upstream's PLEG metrics.
	Metrics *Metrics
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Metrics are upstream's PLEG metrics.
type Metrics struct {
	RelistDuration prometheus.Histogram
	RelistInterval prometheus.Histogram
	LastSeen       prometheus.Gauge
}

// NewMetrics registers upstream's PLEG metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		RelistDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pleg_relist_duration_seconds",
			Help:    "Duration in seconds for relisting pods in PLEG.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}),
		RelistInterval: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pleg_relist_interval_seconds",
			Help:    "Interval in seconds between relisting in PLEG.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}),
		LastSeen: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "pleg_last_seen_seconds",
			Help: "Timestamp in seconds when PLEG was last seen active.",
		}),
	}
	reg.MustRegister(m.RelistDuration, m.RelistInterval, m.LastSeen)
	return m
}

// record is what the last relist saw of one pod.
type record struct {
	containers []pod.Container
}

// PLEG relists the runtime and keeps the pods' containers.
type PLEG struct {
	o       Options
	started time.Time

	// relistMu makes relists one at a time.
	relistMu sync.Mutex

	mu   sync.Mutex
	pods map[types.UID]record
	// at is when the last successful relist began: what it saw is at
	// least as new as that.
	at time.Time
	// lastRelist is when the last relist began, successful or not
	// (upstream's relistTime, which the health check reads).
	lastRelist time.Time
}

// New returns a PLEG; Run relists.
func New(o Options) *PLEG {
	if o.Period <= 0 {
		o.Period = time.Second
	}
	p := &PLEG{o: o, pods: map[types.UID]record{}}
	p.started = p.now()
	return p
}

func (p *PLEG) now() time.Time {
	if p.o.Now != nil {
		return p.o.Now()
	}
	return time.Now()
}

// Run relists every period until ctx ends.
func (p *PLEG) Run(ctx context.Context) {
	t := time.NewTicker(p.o.Period)
	defer t.Stop()
	for {
		if err := p.Relist(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "PLEG: listing the runtime's containers")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Relist lists every container once, replaces the cache, and calls
// OnChange for each pod whose containers differ from the previous relist.
func (p *PLEG) Relist(ctx context.Context) error {
	p.relistMu.Lock()
	defer p.relistMu.Unlock()
	start := p.now()
	p.mu.Lock()
	prev := p.lastRelist
	p.lastRelist = start
	p.mu.Unlock()
	if m := p.o.Metrics; m != nil {
		if !prev.IsZero() {
			m.RelistInterval.Observe(start.Sub(prev).Seconds())
		}
		m.LastSeen.Set(float64(start.UnixNano()) / float64(time.Second))
		defer func() { m.RelistDuration.Observe(p.now().Sub(start).Seconds()) }()
	}
	all, err := p.o.Runtime.ListContainers(ctx, "")
	if err != nil {
		return err
	}
	pods := map[types.UID]record{}
	for _, c := range all {
		uid := c.PodUID()
		r := pods[uid]
		r.containers = append(r.containers, c)
		pods[uid] = r
	}
	p.mu.Lock()
	old := p.pods
	p.pods, p.at = pods, start
	p.mu.Unlock()
	if p.o.OnChange == nil {
		return nil
	}
	for uid, r := range pods {
		if o, ok := old[uid]; !ok || changed(o.containers, r.containers) {
			p.o.OnChange(uid)
		}
	}
	for uid := range old {
		if _, ok := pods[uid]; !ok {
			p.o.OnChange(uid)
		}
	}
	return nil
}

// changed says two listings of a pod differ in a way a worker acts on:
// a container appeared or went, or changed state.
func changed(a, b []pod.Container) bool {
	if len(a) != len(b) {
		return true
	}
	key := func(c pod.Container) string {
		return fmt.Sprintf("%s/%s/%d/%d/%d/%s", c.ID, c.State, c.ExitCode, c.StartedAt.UnixNano(), c.FinishedAt.UnixNano(), c.Reason)
	}
	ka := make([]string, len(a))
	kb := make([]string, len(b))
	for i := range a {
		ka[i], kb[i] = key(a[i]), key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return !slices.Equal(ka, kb)
}

// Containers returns a pod's containers as the last relist saw them, if
// that relist began after `after` (so it saw every change made before
// then); ok is false when there is no such relist yet, and the caller
// must ask the runtime.
func (p *PLEG) Containers(uid types.UID, after time.Time) (cs []pod.Container, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at.IsZero() || !p.at.After(after) {
		return nil, false
	}
	return slices.Clone(p.pods[uid].containers), true
}

// Healthy is upstream's PLEG health check: an error when no relist has
// begun for RelistThreshold.
func (p *PLEG) Healthy() error {
	p.mu.Lock()
	last := p.lastRelist
	p.mu.Unlock()
	if last.IsZero() {
		last = p.started
	}
	if d := p.now().Sub(last); d > RelistThreshold {
		return fmt.Errorf("pleg was last seen active %v ago; threshold is %v", d, RelistThreshold)
	}
	return nil
}
