package podautoscaler

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/utils/clock"
)

// Options tune the controller, with upstream's flags and defaults.
type Options struct {
	// SyncPeriod is how often every HPA is reconciled
	// (--horizontal-pod-autoscaler-sync-period).
	SyncPeriod time.Duration
	// DownscaleStabilizationWindow: the highest recommendation of this
	// window is applied when scaling down, for an HPA without its own
	// (--horizontal-pod-autoscaler-downscale-stabilization).
	DownscaleStabilizationWindow time.Duration
	// Tolerance: no change while usage is within this fraction of the
	// target (--horizontal-pod-autoscaler-tolerance).
	Tolerance float64
	// CPUInitializationPeriod: how long after a pod starts its CPU samples
	// need it Ready for a whole window
	// (--horizontal-pod-autoscaler-cpu-initialization-period).
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay: how long after a pod starts a not-ready pod
	// counts as never ready (--horizontal-pod-autoscaler-initial-readiness-delay).
	InitialReadinessDelay time.Duration
	// ConcurrentSyncs is the number of workers
	// (--concurrent-horizontal-pod-autoscaler-syncs).
	ConcurrentSyncs int
	// Clock is the time windows are measured with (nil: the real clock).
	Clock clock.Clock
}

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{
		SyncPeriod:                   15 * time.Second,
		DownscaleStabilizationWindow: 5 * time.Minute,
		Tolerance:                    0.1,
		CPUInitializationPeriod:      5 * time.Minute,
		InitialReadinessDelay:        30 * time.Second,
		ConcurrentSyncs:              5,
	}
}

// AddFlags registers the options under upstream's flag names.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.SyncPeriod, "horizontal-pod-autoscaler-sync-period", o.SyncPeriod, "The period for syncing the number of pods in horizontal pod autoscaler.")
	fs.DurationVar(&o.DownscaleStabilizationWindow, "horizontal-pod-autoscaler-downscale-stabilization", o.DownscaleStabilizationWindow,
		"The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.")
	fs.Float64Var(&o.Tolerance, "horizontal-pod-autoscaler-tolerance", o.Tolerance,
		"The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.")
	fs.DurationVar(&o.CPUInitializationPeriod, "horizontal-pod-autoscaler-cpu-initialization-period", o.CPUInitializationPeriod,
		"The period after pod start when CPU samples might be skipped.")
	fs.DurationVar(&o.InitialReadinessDelay, "horizontal-pod-autoscaler-initial-readiness-delay", o.InitialReadinessDelay,
		"The period after pod start during which readiness changes will be treated as initial readiness.")
	fs.IntVar(&o.ConcurrentSyncs, "concurrent-horizontal-pod-autoscaler-syncs", o.ConcurrentSyncs,
		"The number of horizontal pod autoscaler objects that are allowed to sync concurrently.")
}

// Validate reports bad option values.
func (o *Options) Validate() []error {
	var errs []error
	if o.SyncPeriod <= 0 {
		errs = append(errs, errors.New("--horizontal-pod-autoscaler-sync-period must be positive"))
	}
	if o.DownscaleStabilizationWindow < 0 {
		errs = append(errs, errors.New("--horizontal-pod-autoscaler-downscale-stabilization must not be negative"))
	}
	if o.Tolerance < 0 {
		errs = append(errs, errors.New("--horizontal-pod-autoscaler-tolerance must not be negative"))
	}
	if o.CPUInitializationPeriod < 0 || o.InitialReadinessDelay < 0 {
		errs = append(errs, errors.New("--horizontal-pod-autoscaler-cpu-initialization-period and --horizontal-pod-autoscaler-initial-readiness-delay must not be negative"))
	}
	if o.ConcurrentSyncs < 1 {
		errs = append(errs, errors.New("--concurrent-horizontal-pod-autoscaler-syncs must be at least 1"))
	}
	return errs
}
