package imagegc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Upstream's defaults and event reasons.
const (
	DefaultHighThresholdPercent = 85
	DefaultLowThresholdPercent  = 80
	DefaultMinAge               = 2 * time.Minute
	// Period is how often Start collects (upstream's ImageGCPeriod).
	Period = 5 * time.Minute

	EventFreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	EventImageGCFailed       = "ImageGCFailed"
	EventInvalidDiskCapacity = "InvalidDiskCapacity"
)

// Image is an image the runtime holds.
type Image struct {
	// ID identifies the image; containers report the same ID.
	ID string
	// Refs are the names pointing at the image.
	Refs []string
	// Size is the disk space removing the image frees, in bytes.
	Size int64
	// Pinned images are never removed (e.g. the sandbox image).
	Pinned bool
}

// Runtime is what the collector needs from the container runtime.
type Runtime interface {
	// ListImages lists the images.
	ListImages(ctx context.Context) ([]Image, error)
	// ImagesInUse lists the image IDs of all containers, running or not.
	ImagesInUse(ctx context.Context) ([]string, error)
	// RemoveImage removes the image and every name pointing at it.
	RemoveImage(ctx context.Context, img Image) error
}

// FsStats are an image filesystem's size and free space in bytes.
type FsStats struct {
	Capacity, Available int64
}

// StatFS returns an ImageFS function reading the filesystem of path.
func StatFS(path string) func(context.Context) (FsStats, error) {
	return func(context.Context) (FsStats, error) {
		var s unix.Statfs_t
		if err := unix.Statfs(path, &s); err != nil {
			return FsStats{}, fmt.Errorf("statfs %s: %w", path, err)
		}
		return FsStats{Capacity: int64(s.Blocks) * int64(s.Bsize), Available: int64(s.Bavail) * int64(s.Bsize)}, nil
	}
}

// Policy is when and how much to collect.
type Policy struct {
	HighThresholdPercent int
	LowThresholdPercent  int
	MinAge               time.Duration
}

// NewPolicy returns upstream's defaults.
func NewPolicy() *Policy {
	return &Policy{HighThresholdPercent: DefaultHighThresholdPercent, LowThresholdPercent: DefaultLowThresholdPercent, MinAge: DefaultMinAge}
}

// AddFlags adds --image-gc-high-threshold, --image-gc-low-threshold and
// --image-minimum-gc-age.
func (p *Policy) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&p.HighThresholdPercent, "image-gc-high-threshold", p.HighThresholdPercent,
		"The percent of disk usage after which image garbage collection is always run. Values must be within the range [0, 100]; 100 disables image garbage collection.")
	fs.IntVar(&p.LowThresholdPercent, "image-gc-low-threshold", p.LowThresholdPercent,
		"The percent of disk usage before which image garbage collection is never run. Lowest disk usage to garbage collect to. Values must be within the range [0, 100] and not greater than the high threshold.")
	fs.DurationVar(&p.MinAge, "image-minimum-gc-age", p.MinAge, "Minimum age for an unused image before it is garbage collected.")
}

// Validate checks the policy as upstream does.
func (p *Policy) Validate() error {
	switch {
	case p.HighThresholdPercent < 0 || p.HighThresholdPercent > 100:
		return fmt.Errorf("invalid --image-gc-high-threshold %d, must be in range [0-100]", p.HighThresholdPercent)
	case p.LowThresholdPercent < 0 || p.LowThresholdPercent > 100:
		return fmt.Errorf("invalid --image-gc-low-threshold %d, must be in range [0-100]", p.LowThresholdPercent)
	case p.LowThresholdPercent > p.HighThresholdPercent:
		return fmt.Errorf("--image-gc-low-threshold %d can not be higher than --image-gc-high-threshold %d", p.LowThresholdPercent, p.HighThresholdPercent)
	case p.MinAge < 0:
		return fmt.Errorf("--image-minimum-gc-age must not be negative, got %v", p.MinAge)
	}
	return nil
}

// Options configure a Manager. Runtime and ImageFS are required.
type Options struct {
	Policy  Policy
	Runtime Runtime
	ImageFS func(ctx context.Context) (FsStats, error)
	// Recorder and NodeRef receive the Warning events (optional).
	Recorder record.EventRecorder
	NodeRef  *corev1.ObjectReference
	// Registerer gets kubelet_image_garbage_collected_total (optional).
	Registerer prometheus.Registerer
	Clock      clock.WithTicker
	// Interval between collections in Start (Period if 0).
	Interval time.Duration
}

// imageRecord is what the manager knows of an image.
type imageRecord struct {
	firstDetected time.Time
	lastUsed      time.Time
	size          int64
	pinned        bool
	image         Image
}

// Manager collects unused images.
type Manager struct {
	o         Options
	collected *prometheus.CounterVec

	mu      sync.Mutex // serialises collections and guards records
	records map[string]*imageRecord
}

// New checks the options and returns a Manager.
func New(o Options) (*Manager, error) {
	if o.Runtime == nil || o.ImageFS == nil {
		return nil, errors.New("imagegc: Runtime and ImageFS are required")
	}
	if err := o.Policy.Validate(); err != nil {
		return nil, err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Interval <= 0 {
		o.Interval = Period
	}
	m := &Manager{o: o, records: map[string]*imageRecord{}}
	m.collected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "kubelet", Name: "image_garbage_collected_total",
		Help: "Total number of images garbage collected by the kubelet, whether through disk usage or image age.",
	}, []string{"reason"})
	if o.Registerer != nil {
		if err := o.Registerer.Register(m.collected); err != nil {
			return nil, fmt.Errorf("imagegc: registering metrics: %w", err)
		}
	}
	return m, nil
}

// Start collects every Interval until ctx ends, unless the high threshold
// is 100 (collection disabled, as upstream). A collection that fails twice
// in a row records an ImageGCFailed event.
func (m *Manager) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("imagegc")
	ctx = klog.NewContext(ctx, logger)
	if m.o.Policy.HighThresholdPercent == 100 {
		logger.V(2).Info("ImageGCHighThresholdPercent is set 100, Disable image GC")
		<-ctx.Done()
		return nil
	}
	failedBefore := false
	for {
		if err := m.GarbageCollect(ctx); err != nil {
			if failedBefore {
				logger.Error(err, "Image garbage collection failed multiple times in a row")
				m.event(EventImageGCFailed, err.Error())
			} else {
				logger.Error(err, "Image garbage collection failed once. Stats initialization may not have completed yet")
			}
			failedBefore = true
		} else {
			failedBefore = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-m.o.Clock.After(m.o.Interval):
		}
	}
}

// GarbageCollect frees space when the image filesystem's usage is at or
// above the high threshold, down to the low threshold.
func (m *Manager) GarbageCollect(ctx context.Context) error {
	fs, err := m.o.ImageFS(ctx)
	if err != nil {
		return fmt.Errorf("reading the image filesystem: %w", err)
	}
	capacity, available := fs.Capacity, fs.Available
	if available > capacity {
		klog.FromContext(ctx).Info("Availability is larger than capacity", "available", available, "capacity", capacity)
		available = capacity
	}
	if capacity <= 0 {
		err := errors.New("invalid capacity 0 on image filesystem")
		m.event(EventInvalidDiskCapacity, err.Error())
		return err
	}
	usagePercent := 100 - int(available*100/capacity)
	if usagePercent < m.o.Policy.HighThresholdPercent {
		return nil
	}
	toFree := capacity*int64(100-m.o.Policy.LowThresholdPercent)/100 - available
	klog.FromContext(ctx).Info("Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold",
		"usage", usagePercent, "highThreshold", m.o.Policy.HighThresholdPercent, "amountToFree", toFree, "lowThreshold", m.o.Policy.LowThresholdPercent)
	freed, err := m.freeSpace(ctx, toFree)
	if err != nil {
		return err
	}
	if freed < toFree {
		err := fmt.Errorf("Failed to garbage collect required amount of images. Attempted to free %d bytes, but only found %d bytes eligible to free.", toFree, freed) //nolint:staticcheck // upstream's message
		m.event(EventFreeDiskSpaceFailed, err.Error())
		return err
	}
	return nil
}

// DeleteUnusedImages removes every image no container uses that is old
// enough, whatever the usage (the eviction manager's reclaim function).
func (m *Manager) DeleteUnusedImages(ctx context.Context) error {
	klog.FromContext(ctx).Info("Attempting to delete unused images")
	_, err := m.freeSpace(ctx, math.MaxInt64)
	return err
}

// Detect refreshes the records: new images are detected now, images in
// use are used now, removed images are forgotten. It returns the IDs in
// use.
func (m *Manager) Detect(ctx context.Context) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.detect(ctx, m.o.Clock.Now())
}

func (m *Manager) detect(ctx context.Context, now time.Time) (map[string]bool, error) {
	images, err := m.o.Runtime.ListImages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing images: %w", err)
	}
	used, err := m.o.Runtime.ImagesInUse(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the images of containers: %w", err)
	}
	inUse := map[string]bool{}
	for _, id := range used {
		inUse[id] = true
	}
	current := map[string]bool{}
	for _, img := range images {
		current[img.ID] = true
		r, ok := m.records[img.ID]
		if !ok {
			r = &imageRecord{firstDetected: now}
			m.records[img.ID] = r
		}
		if inUse[img.ID] {
			r.lastUsed = now
		}
		r.size, r.pinned, r.image = img.Size, img.Pinned, img
	}
	for id := range m.records {
		if !current[id] {
			delete(m.records, id)
		}
	}
	return inUse, nil
}

// candidate is an image that may be removed.
type candidate struct {
	id string
	imageRecord
}

// freeSpace removes unused images, least recently used first, until
// bytesToFree are freed, and returns the bytes freed.
func (m *Manager) freeSpace(ctx context.Context, bytesToFree int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Clock.Now()
	inUse, err := m.detect(ctx, now)
	if err != nil {
		return 0, err
	}
	var cands []candidate
	for id, r := range m.records {
		if inUse[id] || r.pinned {
			continue
		}
		cands = append(cands, candidate{id: id, imageRecord: *r})
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if !a.lastUsed.Equal(b.lastUsed) {
			return a.lastUsed.Before(b.lastUsed)
		}
		if !a.firstDetected.Equal(b.firstDetected) {
			return a.firstDetected.Before(b.firstDetected)
		}
		return a.id < b.id
	})
	logger := klog.FromContext(ctx)
	var errs []error
	var freed int64
	for _, c := range cands {
		if !c.lastUsed.Before(now) || now.Sub(c.firstDetected) < m.o.Policy.MinAge {
			continue
		}
		logger.Info("Removing image to free bytes", "imageID", c.id, "size", c.size)
		if err := m.o.Runtime.RemoveImage(ctx, c.image); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(m.records, c.id)
		m.collected.WithLabelValues("space").Inc()
		freed += c.size
		if freed >= bytesToFree {
			break
		}
	}
	if len(errs) > 0 {
		return freed, fmt.Errorf("wanted to free %d bytes, but freed %d bytes space with errors in image deletion: %w", bytesToFree, freed, errors.Join(errs...))
	}
	return freed, nil
}

func (m *Manager) event(reason, msg string) {
	if m.o.Recorder != nil && m.o.NodeRef != nil {
		m.o.Recorder.Eventf(m.o.NodeRef, corev1.EventTypeWarning, reason, "%s", msg)
	}
}
