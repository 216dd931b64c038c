// Package reload is skiff-dns's Corefile reloading, registered under
// CoreDNS's name "reload" in the place of CoreDNS's plugin: the same
// directive (`reload [INTERVAL [JITTER]]`, the same defaults, limits and
// random jitter) and metrics (coredns_reload_failed_total,
// coredns_reload_version_info), and the same behaviour: the Corefile is
// read again every interval, and the server restarts into it when its
// parsed form changed.
//
// The difference is who owns the loop. CoreDNS's plugin starts a loop
// from a process-wide event hook for every instance that ever started,
// and stops only one of them (the first instance's final shutdown sends
// on a process-wide channel); every other loop lives on holding its
// instance, and when the Corefile it reads changes it restarts that
// instance, running or stopped: a stopped one is stopped again by
// caddy's Restart (CoreDNS's Server.Stop run twice panics, "sync:
// negative WaitGroup counter"), and a loop that fires while its server
// is being stopped stops it a second time the same way. Here the setup
// only records the interval on the instance; Watch is the loop, run by
// the caller that started the instance, for that instance alone, and it
// has returned before the caller stops the instance it hands back.
package reload

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Name is the plugin's name, CoreDNS's.
const Name = "reload"

// CoreDNS's limits and defaults.
const (
	minJitter       = 1 * time.Second
	minInterval     = 2 * time.Second
	defaultInterval = 30 * time.Second
	defaultJitter   = 15 * time.Second
)

var log = clog.NewWithPlugin(Name)

// CoreDNS's reload metrics.
var (
	failedCount = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: "reload",
		Name:      "failed_total",
		Help:      "Counter of the number of failed reload attempts.",
	})
	reloadInfo = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: "reload",
		Name:      "version_info",
		Help:      "A metric with a constant '1' value labeled by hash, and value which type of hash generated.",
	}, []string{"hash", "value"})
)

func init() { plugin.Register(Name, setup) }

// intervalKey keys the instance's reload interval in its storage.
type intervalKey struct{}

func setup(c *caddy.Controller) error {
	c.Next() // 'reload'
	i, err := parse(c)
	if err != nil {
		return plugin.Error(Name, err)
	}
	// One interval per instance; with reload in several server blocks
	// the last one counts, as in CoreDNS.
	c.Set(intervalKey{}, i)
	return nil
}

// parse reads `reload [INTERVAL [JITTER]]` and returns the interval with
// a random jitter added, as CoreDNS does.
func parse(c *caddy.Controller) (time.Duration, error) {
	args := c.RemainingArgs()
	if len(args) > 2 {
		return 0, c.ArgErr()
	}
	i, err := durationArg(args, 0, defaultInterval, minInterval, "interval")
	if err != nil {
		return 0, err
	}
	j, err := durationArg(args, 1, defaultJitter, minJitter, "jitter")
	if err != nil {
		return 0, err
	}
	if j > i/2 {
		j = i / 2
	}
	return i + time.Duration(rand.Int64N(j.Nanoseconds())-j.Nanoseconds()/2), nil
}

// durationArg is args[n] as a duration of at least minimum, or def
// without it.
func durationArg(args []string, n int, def, minimum time.Duration, what string) (time.Duration, error) {
	d := def
	if len(args) > n {
		var err error
		if d, err = time.ParseDuration(args[n]); err != nil {
			return 0, err
		}
	}
	if d < minimum {
		return 0, fmt.Errorf("%s value must be greater or equal to %v", what, minimum)
	}
	return d, nil
}

// Interval is how often inst's Corefile asks to be read again; false when
// it has no reload directive.
func Interval(inst *caddy.Instance) (time.Duration, bool) {
	inst.StorageMu.RLock()
	defer inst.StorageMu.RUnlock()
	i, ok := inst.Storage[intervalKey{}].(time.Duration)
	return i, ok
}

// hash is the SHA-512 of the Corefile's parsed server blocks (CoreDNS's):
// comments and spaces within a line are no change.
func hash(in caddy.Input) ([sha512.Size]byte, error) {
	blocks, err := caddyfile.Parse(in.Path(), bytes.NewReader(in.Body()), nil)
	if err != nil {
		return [sha512.Size]byte{}, err
	}
	b, err := json.Marshal(blocks)
	if err != nil {
		return [sha512.Size]byte{}, err
	}
	return sha512.Sum512(b), nil
}

// Watch reads the Corefile with load every interval inst's Corefile's
// reload directive asks for, and restarts the running instance into it
// when it changed, until ctx ends or the running Corefile has no reload
// directive; then it returns the instance that runs (inst, or the last
// one it restarted into), which only the caller stops. A restart that
// fails leaves the running instance as it was, and the same Corefile is
// not tried again until it changes. restarted is called with each new
// instance. Watch runs in one goroutine per started instance, and nothing
// else restarts or stops that instance while it runs.
func Watch(ctx context.Context, inst *caddy.Instance, load func() (caddy.Input, error), restarted func(*caddy.Instance)) *caddy.Instance {
	interval, ok := Interval(inst)
	if !ok {
		return inst
	}
	sum, err := hash(inst.Caddyfile())
	if err != nil {
		// The running Corefile parsed when the instance started.
		log.Errorf("Parsing the running Corefile: %s", err)
		return inst
	}
	log.Infof("Running configuration SHA512 = %x", sum)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return inst
		case <-tick.C:
		}
		in, err := load()
		if err != nil {
			continue
		}
		s, err := hash(in)
		if err != nil {
			log.Warningf("Corefile parse failed: %s", err)
			continue
		}
		if s == sum {
			continue
		}
		// The instance is stopping: it must not start again.
		if ctx.Err() != nil {
			return inst
		}
		reloadInfo.Delete(prometheus.Labels{"hash": "sha512", "value": hex.EncodeToString(sum[:])})
		// Not again with the same Corefile, even when it fails.
		sum = s
		next, err := inst.Restart(in)
		reloadInfo.WithLabelValues("sha512", hex.EncodeToString(sum[:])).Set(1)
		if err != nil {
			log.Errorf("Corefile changed but reload failed: %s", err)
			failedCount.Inc()
			continue
		}
		inst = next
		log.Infof("Running configuration SHA512 = %x", sum)
		if restarted != nil {
			restarted(inst)
		}
		i, ok := Interval(inst)
		if !ok {
			// The new Corefile has no reload directive.
			return inst
		}
		if i != interval {
			interval = i
			tick.Reset(interval)
		}
	}
}
