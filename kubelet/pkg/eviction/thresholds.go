package eviction

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Upstream's defaults on Linux.
const (
	// DefaultHard is the default of --eviction-hard.
	DefaultHard = "memory.available<100Mi,nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%,imagefs.inodesFree<5%"
	// DefaultPressureTransitionPeriod is the default of
	// --eviction-pressure-transition-period.
	DefaultPressureTransitionPeriod = 5 * time.Minute
	// MonitoringInterval is how often the manager synchronizes
	// (upstream's housekeeping interval).
	MonitoringInterval = 10 * time.Second
)

// Flags are the eviction manager's command-line flags.
type Flags struct {
	Hard                     string
	PressureTransitionPeriod time.Duration
}

// NewFlags returns the flags with upstream's defaults.
func NewFlags() *Flags {
	return &Flags{Hard: DefaultHard, PressureTransitionPeriod: DefaultPressureTransitionPeriod}
}

// AddFlags adds --eviction-hard and --eviction-pressure-transition-period.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Hard, "eviction-hard", f.Hard,
		"A set of eviction thresholds (e.g. memory.available<1Gi) that if met would trigger a pod eviction. "+
			"Setting the flag replaces all the defaults; an empty value disables hard eviction.")
	fs.DurationVar(&f.PressureTransitionPeriod, "eviction-pressure-transition-period", f.PressureTransitionPeriod,
		"Duration for which the kubelet has to wait before transitioning out of an eviction pressure condition.")
}

// Thresholds parses --eviction-hard and checks the transition period.
func (f *Flags) Thresholds() ([]Threshold, error) {
	if f.PressureTransitionPeriod < 0 {
		return nil, fmt.Errorf("--eviction-pressure-transition-period must not be negative, got %v", f.PressureTransitionPeriod)
	}
	th, err := ParseThresholds(f.Hard)
	if err != nil {
		return nil, fmt.Errorf("--eviction-hard: %w", err)
	}
	return th, nil
}

// ParseThresholds parses upstream's --eviction-hard syntax: a comma
// separated list of signal<quantity or signal<percentage%. As upstream, a
// threshold of 0% or 100% is ignored, and the result is sorted by signal.
func ParseThresholds(s string) ([]Threshold, error) {
	var out []Threshold
	seen := map[Signal]bool{}
	for _, stmt := range strings.Split(s, ",") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		th, err := parseStatement(stmt)
		if err != nil {
			return nil, err
		}
		if th == nil {
			continue
		}
		if seen[th.Signal] {
			return nil, fmt.Errorf("found duplicate eviction threshold for signal %v", th.Signal)
		}
		seen[th.Signal] = true
		out = append(out, *th)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Signal < out[j].Signal })
	return out, nil
}

func parseStatement(stmt string) (*Threshold, error) {
	name, val, ok := strings.Cut(stmt, "<")
	if !ok {
		return nil, fmt.Errorf("malformed eviction threshold %q: expected signal<quantity", stmt)
	}
	sig := Signal(strings.TrimSpace(name))
	if _, known := signalResource[sig]; !known {
		return nil, fmt.Errorf("unsupported eviction signal %q in %q", sig, stmt)
	}
	val = strings.TrimSpace(val)
	if val == "" {
		return nil, fmt.Errorf("eviction threshold %v has no value", sig)
	}
	if strings.HasSuffix(val, "%") {
		return parsePercentThreshold(sig, val)
	}
	q, err := resource.ParseQuantity(val)
	if err != nil {
		return nil, fmt.Errorf("eviction threshold %v: invalid quantity %q: %w", sig, val, err)
	}
	if q.Sign() <= 0 {
		return nil, fmt.Errorf("eviction threshold %v must be positive: %s", sig, val)
	}
	return &Threshold{Signal: sig, Quantity: &q}, nil
}

func parsePercentThreshold(sig Signal, val string) (*Threshold, error) {
	if val == "0%" || val == "100%" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(val, "%"), 64)
	if err != nil {
		return nil, fmt.Errorf("eviction threshold %v: invalid percentage %q", sig, val)
	}
	switch {
	case f < 0:
		return nil, fmt.Errorf("eviction percentage threshold %v must be >= 0%%: %s", sig, val)
	case f > 100:
		return nil, fmt.Errorf("eviction percentage threshold %v must be <= 100%%: %s", sig, val)
	}
	if f == 0 || f == 100 {
		return nil, nil
	}
	return &Threshold{Signal: sig, Percentage: f / 100}, nil
}

func formatPercent(p float64) string {
	return strconv.FormatFloat(p*100, 'g', 6, 64) + "%"
}
