package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"skiff.dev/apiserver/pkg/server"
)

// chainServerCommand, as the bench's first argument, makes the binary serve
// one server of the chain phase in a process of its own (serveChainArm).
const chainServerCommand = "chain-server"

// chainOptions is the chain phase's server configuration: with the chain
// (Node,RBAC and every admission plugin, ServiceAccount too: the test
// servers turn it off, and the phase makes the namespace's default
// ServiceAccount as the controller manager would) or without it
// (AlwaysAllow, no admission).
func chainOptions(chain bool) func(*server.Options) {
	if chain {
		return func(so *server.Options) { so.DisableAdmissionPlugins = nil }
	}
	return func(so *server.Options) {
		so.AuthorizationModes = []string{"AlwaysAllow"}
		so.DisableAdmissionPlugins = server.AdmissionPlugins
	}
}

// serveChainArm is the child process of one chain-phase server: it starts
// an API server (with its embedded etcd, or one of -etcd-binary) in -dir,
// writes its URL to dir/url once it serves, and stops on SIGTERM.
func serveChainArm(args []string) error {
	fs := flag.NewFlagSet(chainServerCommand, flag.ContinueOnError)
	dir := fs.String("dir", "", "State directory of the server.")
	chain := fs.Bool("chain", false, "Run the request chain (Node,RBAC and every admission plugin).")
	label := fs.String("label", "", "The arm's pprof label chain=<label>.")
	etcdBinary := fs.String("etcd-binary", "", "As the bench's -etcd-binary.")
	cpuProfile := fs.String("cpuprofile", "", "Write this process's CPU profile here.")
	memProfile := fs.String("memprofile", "", "Write this process's allocation profile here when it stops.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *label == "" {
		return errors.New("-dir and -label are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	ts, stopEtcd, err := startServer(ctx, &options{etcdBinary: *etcdBinary}, *dir, *label, chainOptions(*chain))
	if err != nil {
		return err
	}
	defer stopEtcd()
	defer ts.TearDown()
	if *memProfile != "" {
		defer func() {
			if err := writeAllocs(*memProfile); err != nil {
				fmt.Fprintln(os.Stderr, "writing the allocation profile:", err)
			}
		}()
	}
	tmp := filepath.Join(*dir, "url.tmp")
	if err := os.WriteFile(tmp, []byte(ts.URL), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(*dir, "url")); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// chainProcess is a chain-phase server running as its own process.
type chainProcess struct {
	cmd  *exec.Cmd
	done chan error
	log  string
}

// startChainProcess starts this binary as c's server with its state in
// dir and waits until it serves; it returns the admin's client config.
func (b *bench) startChainProcess(ctx context.Context, c chainConfig, dir string, round int) (*chainProcess, *rest.Config, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	args := []string{chainServerCommand, "-dir", dir, "-label", c.label, "-chain=" + strconv.FormatBool(c.chain)}
	if b.o.etcdBinary != "" {
		args = append(args, "-etcd-binary", b.o.etcdBinary)
	}
	if b.o.cpuProfile != "" {
		args = append(args, "-cpuprofile", fmt.Sprintf("%s.%s.round%d", b.o.cpuProfile, c.label, round))
	}
	if b.o.memProfile != "" {
		args = append(args, "-memprofile", fmt.Sprintf("%s.%s.round%d", b.o.memProfile, c.label, round))
	}
	p := &chainProcess{done: make(chan error, 1), log: filepath.Join(dir, "server.log")}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, nil, err
	}
	defer logFile.Close()
	p.cmd = exec.Command(self, args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, nil, err
	}
	go func() { p.done <- p.cmd.Wait() }()
	var url []byte
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		select {
		case err := <-p.done:
			p.done <- err
			return false, fmt.Errorf("the server exited: %v; %s", err, p.tail())
		default:
		}
		var err error
		url, err = os.ReadFile(filepath.Join(dir, "url"))
		return err == nil, nil
	})
	if err != nil {
		p.stop()
		return nil, nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		p.stop()
		return nil, nil, err
	}
	cfg.Host = string(url)
	cfg.QPS, cfg.Burst = -1, -1
	return p, cfg, nil
}

// tail is the end of the server's log, for an error.
func (p *chainProcess) tail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return "log ends:\n" + string(data)
}

// stop ends the process (it tears its server and etcd down) and waits.
func (p *chainProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// cpu is the CPU time (user and system) the process has used so far.
func (p *chainProcess) cpu() (time.Duration, error) {
	return processCPU(p.cmd.Process.Pid)
}

// processCPU reads a process's user and system time from /proc.
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...: comm may hold spaces; fields after it
	// count from state (field 3). utime and stime are fields 14 and 15.
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / 100), nil // USER_HZ
}

// serverUse is what a server process used: CPU time (with its embedded
// etcd) and heap allocations (bytes and objects, from its /metrics).
type serverUse struct {
	cpu            time.Duration
	bytes, objects float64
	// gcs counts garbage collection cycles (-chain-trace shows them).
	gcs float64
}

func (u serverUse) sub(v serverUse) serverUse {
	return serverUse{u.cpu - v.cpu, u.bytes - v.bytes, u.objects - v.objects, u.gcs - v.gcs}
}

func (u serverUse) add(v serverUse) serverUse {
	return serverUse{u.cpu + v.cpu, u.bytes + v.bytes, u.objects + v.objects, u.gcs + v.gcs}
}

// per is u divided among n creates.
func (u serverUse) per(n int) serverUse {
	return serverUse{u.cpu / time.Duration(n), u.bytes / float64(n), u.objects / float64(n), u.gcs / float64(n)}
}

func (u serverUse) String() string {
	return fmt.Sprintf("%.0f µs of CPU and allocated %.1f KiB in %.0f objects", micros(u.cpu), u.bytes/1024, u.objects)
}

// use reads the server's CPU time and its Go runtime's allocation
// counters. before is for the start of a measurement: the counters are read
// first, then the CPU time, and at the end the other way round, so that
// the CPU time leaves out the two /metrics requests (their allocations
// after the counters were taken, a few hundred KiB at most, are counted).
func (s *chainServer) use(ctx context.Context, before bool) (serverUse, error) {
	var u serverUse
	var err error
	if !before {
		if u.cpu, err = s.proc.cpu(); err != nil {
			return serverUse{}, err
		}
	}
	data, err := s.admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return serverUse{}, fmt.Errorf("reading /metrics: %w", err)
	}
	for want, v := range map[string]*float64{"go_memstats_alloc_bytes_total": &u.bytes, "go_memstats_mallocs_total": &u.objects, "go_gc_duration_seconds_count": &u.gcs} {
		found := false
		for line := range strings.Lines(string(data)) {
			name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
			if ok && name == want {
				if *v, err = strconv.ParseFloat(value, 64); err != nil {
					return serverUse{}, fmt.Errorf("/metrics: %s: %w", want, err)
				}
				found = true
				break
			}
		}
		if !found {
			return serverUse{}, fmt.Errorf("/metrics has no %s", want)
		}
	}
	if before {
		if u.cpu, err = s.proc.cpu(); err != nil {
			return serverUse{}, err
		}
	}
	return u, nil
}
