package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"skiff.dev/component-base/clientconfig"
	"skiff.dev/component-base/leaderelection"
	"skiff.dev/component-base/serving"
	"skiff.dev/component-base/tracing"
)

// Options are skiff-controller-manager's flags.
type Options struct {
	Client         clientconfig.Options
	Serving        *serving.Options
	LeaderElection *leaderelection.Options
	Tracing        *tracing.Options

	// Controllers selects controllers as upstream's --controllers does:
	// "*" is every controller on by default, "name" turns one on, "-name"
	// turns one off.
	Controllers  []string
	ResyncPeriod time.Duration

	Controller ControllerOptions
}

// NewOptions returns the defaults (upstream's, except where skiff's own
// are documented on the flag).
func NewOptions() *Options {
	return &Options{
		// High enough never to throttle a healthy API server: a
		// 1,000-replica Deployment needs over a thousand writes a second.
		Client:         clientconfig.Options{QPS: 5000, Burst: 10000},
		Serving:        serving.NewOptions(10257),
		LeaderElection: leaderelection.NewOptions("kube-controller-manager"),
		Tracing:        tracing.NewOptions(),
		Controllers:    []string{"*"},
		ResyncPeriod:   12 * time.Hour,
		Controller:     defaultControllerOptions(),
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Client.AddFlags(fs)
	o.Serving.AddFlags(fs)
	o.LeaderElection.AddFlags(fs)
	o.Tracing.AddFlags(fs)
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"Controllers to run: '*' runs every controller, 'foo' turns foo on, '-foo' turns it off. All controllers: %s.",
		strings.Join(controllerNames(), ", ")))
	fs.DurationVar(&o.ResyncPeriod, "min-resync-period", o.ResyncPeriod, "How often the informers resend every object to the controllers.")
	o.Controller.addFlags(fs)
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.Client.Validate()...)
	errs = append(errs, o.Serving.Validate()...)
	errs = append(errs, o.LeaderElection.Validate()...)
	errs = append(errs, o.Tracing.Validate()...)
	known := controllerNames()
	for _, name := range o.Controllers {
		n := strings.TrimPrefix(name, "-")
		if n != "*" && !slices.Contains(known, n) {
			errs = append(errs, fmt.Errorf("--controllers: unknown controller %q (known: %s)", name, strings.Join(known, ", ")))
		}
	}
	if o.ResyncPeriod < 0 {
		errs = append(errs, errors.New("--min-resync-period must not be negative"))
	}
	errs = append(errs, o.Controller.validate()...)
	return errors.Join(errs...)
}

// enabled applies --controllers to ctrl.
func (o *Options) enabled(ctrl Controller) bool {
	if slices.Contains(o.Controllers, "-"+ctrl.Name) {
		return false
	}
	if slices.Contains(o.Controllers, ctrl.Name) {
		return true
	}
	return slices.Contains(o.Controllers, "*") && !ctrl.OffByDefault
}
