package leaderelection

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// ErrLost is returned by Run when another replica took the Lease.
var ErrLost = errors.New("leader election lost")

// Options are the leader election flags.
type Options struct {
	LeaderElect       bool
	LeaseDuration     time.Duration
	RenewDeadline     time.Duration
	RetryPeriod       time.Duration
	ResourceNamespace string
	ResourceName      string
	// KeepLeaseOnExit leaves the Lease held when the context ends, as a
	// crashed process would (tests of the hand-over); by default a
	// stopping leader releases it so a standby takes over at once.
	KeepLeaseOnExit bool
}

// NewOptions returns upstream's defaults for a Lease named name in
// kube-system.
func NewOptions(name string) *Options {
	return &Options{
		LeaderElect:       true,
		LeaseDuration:     15 * time.Second,
		RenewDeadline:     10 * time.Second,
		RetryPeriod:       2 * time.Second,
		ResourceNamespace: "kube-system",
		ResourceName:      name,
	}
}

// AddFlags registers the flags under upstream's names.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Hold a Lease before acting, so that only one of several replicas is active.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long non-leaders wait after the last renewal before taking over.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader retries renewing before it gives up leadership.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How long to wait between attempts to acquire or renew.")
	fs.StringVar(&o.ResourceNamespace, "leader-elect-resource-namespace", o.ResourceNamespace, "The namespace of the Lease.")
	fs.StringVar(&o.ResourceName, "leader-elect-resource-name", o.ResourceName, "The name of the Lease.")
}

// Validate checks the options.
func (o *Options) Validate() []error {
	if !o.LeaderElect {
		return nil
	}
	var errs []error
	if o.LeaseDuration <= o.RenewDeadline {
		errs = append(errs, errors.New("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"))
	}
	if o.RetryPeriod <= 0 || o.RenewDeadline <= o.RetryPeriod {
		errs = append(errs, errors.New("--leader-elect-renew-deadline must be greater than --leader-elect-retry-period, which must be positive"))
	}
	if o.ResourceNamespace == "" || o.ResourceName == "" {
		errs = append(errs, errors.New("--leader-elect-resource-namespace and --leader-elect-resource-name must not be empty"))
	}
	return errs
}

// Run calls run while holding the Lease (at once, when leader election is
// off) and returns after run has returned. leading, when not nil, is kept
// true while this replica leads.
func Run(ctx context.Context, o *Options, cfg *rest.Config, leading *atomic.Bool, run func(context.Context) error) error {
	if leading == nil {
		leading = new(atomic.Bool)
	}
	if !o.LeaderElect {
		leading.Store(true)
		defer leading.Store(false)
		return run(ctx)
	}
	logger := klog.FromContext(ctx)
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	id := host + "_" + uuid.NewString()
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election"))
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.ResourceNamespace, Name: o.ResourceName},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	// OnStartedLeading runs in a goroutine of the elector's; runDone carries
	// its result so Run returns only after run has stopped. A callback that
	// starts after le.Run returned sees stopped and does nothing.
	runDone := make(chan error, 1)
	var (
		mu               sync.Mutex
		started, stopped bool
		lost             atomic.Bool
	)
	lease := o.ResourceNamespace + "/" + o.ResourceName
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: !o.KeepLeaseOnExit,
		Name:            o.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				if stopped {
					mu.Unlock()
					return
				}
				started = true
				mu.Unlock()
				logger.Info("Started leading", "lease", lease, "identity", id)
				leading.Store(true)
				runDone <- run(ctx)
			},
			OnStoppedLeading: func() {
				leading.Store(false)
				if ctx.Err() == nil {
					logger.Info("Leadership lost", "lease", lease, "identity", id)
					lost.Store(true)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	mu.Lock()
	stopped = true
	wasStarted := started
	mu.Unlock()
	var runErr error
	if wasStarted {
		runErr = <-runDone
	}
	if lost.Load() {
		return ErrLost
	}
	return runErr
}
