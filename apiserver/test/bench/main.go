package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
)

// options are the bench's flags; the defaults are the documented run.
type options struct {
	phases      []string
	dir         string
	keep        bool
	clients     int
	creates     int
	duration    time.Duration
	etcdWrites  int
	listPods    int
	listRuns    int
	watchers    int
	watchWrites int
	watchRates  []float64
	updates     int
	updatePods  int
	cpuProfile  string
	memProfile  string
	etcdBinary  string
	chainRounds int
	chainSlice  int
	chainPadded bool
	chainTrace  bool
}

var allPhases = []string{"create", "etcd", "floor", "list", "watch", "update", "chain", "chainfloor"}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	run := fs.String("run", strings.Join(allPhases, ","), "Phases to run, comma-separated: "+strings.Join(allPhases, ", ")+".")
	fs.StringVar(&o.dir, "dir", "", "State directory (certificates, etcd data). Empty: a temporary directory, removed at the end.")
	fs.BoolVar(&o.keep, "keep", false, "Keep the state directory.")
	fs.IntVar(&o.clients, "clients", 16, "Concurrent clients for the create phase, the etcd baseline and the LIST set-up.")
	fs.IntVar(&o.creates, "creates", 10000, "Pods created per content type in the create phase.")
	fs.DurationVar(&o.duration, "duration", 0, "If > 0, each create run and the etcd baseline stop after this long (or after -creates/-etcd-writes, whichever comes first).")
	fs.IntVar(&o.etcdWrites, "etcd-writes", 0, "Writes in the etcd baseline. 0: the same as -creates.")
	fs.IntVar(&o.listPods, "list-pods", 10000, "Pods in the namespace that the list phase lists.")
	fs.IntVar(&o.listRuns, "list-runs", 7, "Timed LISTs per variant (after one untimed warm-up).")
	fs.IntVar(&o.watchers, "watchers", 100, "Concurrent watchers in the watch phase, each on its own connection.")
	fs.IntVar(&o.watchWrites, "watch-writes", 1000, "ConfigMap updates per watch run.")
	fs.IntVar(&o.updates, "updates", 10000, "Pod status updates per content type in the update phase.")
	fs.IntVar(&o.updatePods, "update-pods", 1000, "Pods whose status the update phase updates, in turns.")
	rates := fs.String("watch-rates", "100,0", "Update rates (writes/s) of the watch runs, comma-separated; 0 means one writer sending back-to-back.")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "Write a CPU profile of the whole process (server and clients, labelled side=server|client) to this file; the chain phase's servers, each a process of its own, write theirs to <file>.<arm>.round<N>.")
	fs.StringVar(&o.memProfile, "memprofile", "", "Write the allocation profile of the whole process (pprof allocs, all phases) to this file at the end; the chain phase's servers write theirs to <file>.<arm>.round<N>.")
	fs.IntVar(&o.chainRounds, "chain-rounds", 3, "Rounds of the chain phase, each with three fresh servers (chain on, chain off, chain off sent the admitted pod) taking -creates pods each in turns; the cost reported is their median, with a 95% confidence interval from six rounds on.")
	fs.IntVar(&o.chainRounds, "chain-pairs", 3, "The same as -chain-rounds (its name before session 6).")
	fs.IntVar(&o.chainSlice, "chain-slice", 1000, "Creates per turn of a server in the chain phase.")
	fs.BoolVar(&o.chainTrace, "chain-trace", false, "Log every slice of the chain phase: its creates/s, the server's CPU time and how many times it collected garbage.")
	fs.BoolVar(&o.chainPadded, "chain-padded", false, "Add a fourth server to the chain phase, without the chain, sent the bench pod padded with an annotation to the admitted pod's size: what the larger pod's bytes alone cost.")
	fs.StringVar(&o.etcdBinary, "etcd-binary", "", "Run this etcd binary (e.g. /usr/bin/etcd of the Debian package etcd-server) as a separate process for each API server, as a deployment does. Empty: the server's embedded etcd.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, p := range strings.Split(*run, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(allPhases, p) {
			return nil, fmt.Errorf("-run: unknown phase %q (have %s)", p, strings.Join(allPhases, ", "))
		}
		o.phases = append(o.phases, p)
	}
	for _, r := range strings.Split(*rates, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		f, err := strconv.ParseFloat(r, 64)
		if err != nil || f < 0 {
			return nil, fmt.Errorf("-watch-rates: %q is not a rate >= 0", r)
		}
		o.watchRates = append(o.watchRates, f)
	}
	if o.etcdWrites == 0 {
		o.etcdWrites = o.creates
	}
	if o.clients < 1 || o.chainRounds < 1 || o.chainSlice < 1 || o.creates < 1 || o.etcdWrites < 1 || o.listPods < 1 || o.listRuns < 1 || o.watchers < 1 || o.watchWrites < 1 || o.updates < 1 || o.updatePods < 1 {
		return nil, fmt.Errorf("-clients, -chain-rounds, -chain-slice, -creates, -etcd-writes, -list-pods, -list-runs, -watchers, -watch-writes, -updates and -update-pods must be >= 1")
	}
	return o, nil
}

func (o *options) has(phase string) bool { return slices.Contains(o.phases, phase) }

func main() {
	if len(os.Args) > 1 && os.Args[1] == chainServerCommand {
		if err := serveChainArm(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench chain server:", err)
			os.Exit(1)
		}
		return
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options) (err error) {
	fmt.Print(machineSummary(), "\n")

	dir := o.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "skiff-bench-"); err != nil {
			return err
		}
		if !o.keep {
			defer os.RemoveAll(dir)
		}
	}
	logger := klog.Background().WithName("bench")
	ctx = klog.NewContext(ctx, logger)

	// Everything the server starts (its listener, handlers, the embedded
	// etcd) inherits side=server, so a profile can be split by side.
	ts, stopEtcd, err := startServer(ctx, o, dir, "", func(*server.Options) {})
	if err != nil {
		return fmt.Errorf("starting the API server: %w", err)
	}
	defer stopEtcd()
	defer ts.TearDown()
	progress("API server ready at %s (state in %s)", ts.URL, dir)

	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}

	b := &bench{o: o, ts: ts}
	before := sampleCPU()
	pprof.Do(ctx, pprof.Labels("side", "client"), func(ctx context.Context) {
		err = b.runPhases(ctx)
	})
	if err != nil {
		return err
	}
	load := otherLoad(before, sampleCPU())
	if o.memProfile != "" {
		if err := writeAllocs(o.memProfile); err != nil {
			return err
		}
	}
	fmt.Println()
	fmt.Print(b.table())
	fmt.Printf("\nCPU during the measurements: %s.\n", load)
	return nil
}

// startCPUProfile profiles this process's CPU into file until stop.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeAllocs writes the allocation profile (every allocation since the
// start, sampled) to file.
func writeAllocs(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// startServer starts an API server with its state in dir, on an external
// etcd process when -etcd-binary is set. Everything the server starts
// inherits the pprof label side=server (and chain=<chainLabel> when given).
func startServer(ctx context.Context, o *options, dir, chainLabel string, customize func(*server.Options)) (*testserver.TestServer, func(), error) {
	stopEtcd := func() {}
	var etcdServers []string
	if o.etcdBinary != "" {
		e, err := startExternalEtcd(ctx, o.etcdBinary, dir)
		if err != nil {
			return nil, nil, err
		}
		stopEtcd = e.stop
		etcdServers = []string{e.url}
		progress("etcd %s running as its own process at %s", o.etcdBinary, e.url)
	}
	labels := pprof.Labels("side", "server")
	if chainLabel != "" {
		labels = pprof.Labels("side", "server", "chain", chainLabel)
	}
	var ts *testserver.TestServer
	var err error
	pprof.Do(ctx, labels, func(context.Context) {
		ts, err = testserver.StartServer(dir, func(so *server.Options) {
			// The bench is short: no compaction during a run.
			so.EtcdCompactionInterval = 0
			// Advertise the host's address, as a deployed server does: the
			// kubernetes Endpoints may not hold a loopback address, and the
			// retries would otherwise run (and log) during the measurements.
			// Nothing is sent to it.
			so.AdvertiseAddress = ""
			so.EtcdServers = etcdServers
			customize(so)
		})
	})
	if err != nil {
		stopEtcd()
		return nil, nil, err
	}
	return ts, stopEtcd, nil
}

// bench holds the server and what the phases found.
type bench struct {
	o    *options
	ts   *testserver.TestServer
	rows []row

	// storedPod is the raw etcd value of one created Pod.
	storedPod []byte
	// createRate is creates/s per content type.
	createRate map[string]float64
	// etcdRate is writes/s per client kind.
	etcdRate map[string]float64
}

func (b *bench) runPhases(ctx context.Context) error {
	b.createRate, b.etcdRate = map[string]float64{}, map[string]float64{}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"create", b.createPhase},
		{"etcd", b.etcdPhase},
		{"floor", b.floorPhase},
		{"list", b.listPhase},
		{"watch", b.watchPhase},
		{"update", b.updatePhase},
		{"chain", b.chainPhase},
		{"chainfloor", b.chainFloorPhase},
	}
	for _, s := range steps {
		if !b.o.has(s.name) {
			continue
		}
		var err error
		pprof.Do(ctx, pprof.Labels("phase", s.name), func(ctx context.Context) { err = s.fn(ctx) })
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// progress reports what is happening on stderr, so that stdout holds only
// the summary and the table.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
