package app

import (
	"errors"

	"github.com/spf13/pflag"

	"skiff.dev/component-base/clientconfig"
	"skiff.dev/component-base/leaderelection"
	"skiff.dev/component-base/serving"
	"skiff.dev/component-base/tracing"
)

// Options are skiff-scheduler's flags.
type Options struct {
	// ConfigFile is a KubeSchedulerConfiguration; when set, it gives the
	// profiles, and --scheduler-name, --kubeconfig, --kube-api-qps and
	// --kube-api-burst are ignored as upstream ignores its deprecated
	// flags; the leader election flags still override the file when given.
	ConfigFile     string
	SchedulerName  string
	Client         clientconfig.Options
	Serving        *serving.Options
	LeaderElection *leaderelection.Options
	Tracing        *tracing.Options
	// flags is the flag set AddFlags registered with, to tell which flags
	// were given.
	flags *pflag.FlagSet
}

// NewOptions returns the defaults: upstream's, except the client limits,
// which are high enough never to throttle a healthy API server (upstream's
// 50 queries per second would cap binding at 50 pods a second).
func NewOptions() *Options {
	return &Options{
		SchedulerName:  "default-scheduler",
		Client:         clientconfig.Options{QPS: 5000, Burst: 10000},
		Serving:        serving.NewOptions(10259),
		LeaderElection: leaderelection.NewOptions("kube-scheduler"),
		Tracing:        tracing.NewOptions(),
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "The path to a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1) with the profiles, their plugins and plugin arguments.")
	fs.StringVar(&o.SchedulerName, "scheduler-name", o.SchedulerName, "Schedule only pods whose spec.schedulerName is this; also the events' source. Ignored with --config (name the profiles in the file).")
	o.Client.AddFlags(fs)
	o.Serving.AddFlags(fs)
	o.LeaderElection.AddFlags(fs)
	o.Tracing.AddFlags(fs)
}

// changed reports whether a flag was given on the command line.
func (o *Options) changed(name string) bool {
	return o.flags != nil && o.flags.Changed(name)
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.SchedulerName == "" {
		errs = append(errs, errors.New("--scheduler-name must not be empty"))
	}
	errs = append(errs, o.Client.Validate()...)
	errs = append(errs, o.Serving.Validate()...)
	errs = append(errs, o.LeaderElection.Validate()...)
	errs = append(errs, o.Tracing.Validate()...)
	return errors.Join(errs...)
}
