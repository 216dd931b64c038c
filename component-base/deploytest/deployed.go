package deploytest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repo is the repository's root, two levels above this package's source
// (absolute, so that other packages' tests can use these helpers).
var repo = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// daemons are the skiff daemons with a unit and a flags file each.
var daemons = []string{"apiserver", "controller-manager", "scheduler", "kubelet", "proxy", "dns"}

// unit is a parsed systemd unit file.
type unit struct {
	name string
	// keys maps "Section.Key" to its values, in order.
	keys map[string][]string
	// execLines are the lines of ExecStart=, continuation lines split.
	execLines []string
}

func readUnit(t *testing.T, path string) *unit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := &unit{name: filepath.Base(path), keys: map[string][]string{}}
	section, continuing, key := "", false, ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if continuing {
			continuing = strings.HasSuffix(line, "\\")
			line = strings.TrimSpace(strings.TrimSuffix(line, "\\"))
			if key == "Service.ExecStart" {
				u.execLines = append(u.execLines, line)
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: line %q is not KEY=VALUE", path, line)
		}
		key = section + "." + k
		continuing = strings.HasSuffix(v, "\\")
		v = strings.TrimSpace(strings.TrimSuffix(v, "\\"))
		u.keys[key] = append(u.keys[key], v)
		if key == "Service.ExecStart" {
			u.execLines = append(u.execLines, v)
		}
	}
	return u
}

// process is a daemon the test started, with its log.
type process struct {
	name, log string
	cmd       *exec.Cmd
	// exited is closed when the process has exited; err is then its exit.
	exited  chan struct{}
	err     error
	stopped bool
}

func (p *process) stop() {
	if !p.stopped {
		p.stopped = true
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.exited
}

// exitedUnexpectedly reports whether the process ended without stop.
func (p *process) exitedUnexpectedly() bool {
	select {
	case <-p.exited:
		return !p.stopped
	default:
		return false
	}
}

func (p *process) tail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 3000 {
		data = data[len(data)-3000:]
	}
	return string(data)
}

// startUnit runs the ExecStart of a unit under deploy/systemd as systemd
// would, with the install layout moved: every argument's prefix in
// replacements (e.g. /etc/skiff/) becomes its value, and env is the
// environment an EnvironmentFile= would give.
func startUnit(t *testing.T, name, unitFile string, replacements [][2]string, env []string, dir string) *process {
	t.Helper()
	return startUnitWith(t, name, unitFile, replacements, env, nil, nil, dir)
}

func startUnitWith(t *testing.T, name, unitFile string, replacements [][2]string, env, extra, prefix []string, dir string) *process {
	t.Helper()
	u := readUnit(t, filepath.Join(repo, "deploy", "systemd", unitFile))
	args := make([]string, 0, len(u.execLines))
	for _, a := range u.execLines {
		for _, r := range replacements {
			a = strings.ReplaceAll(a, r[0], r[1])
		}
		args = append(args, a)
	}
	binary := args[0]
	if strings.HasPrefix(binary, "/usr/local/bin/") {
		binary = filepath.Join(repo, "bin", filepath.Base(binary))
	}
	args = append(append([]string{binary}, args[1:]...), extra...)
	args = append(append([]string(nil), prefix...), args...)
	return StartProcess(t, name, dir, env, args...)
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// tlsClient returns an HTTPS client with the given client certificate,
// trusting ca.
func tlsClient(t *testing.T, ca, cert, key string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	data, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(data)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
	}}
}

// waitFor polls cond until it returns nil or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, procs []*process, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		for _, p := range procs {
			if p.exitedUnexpectedly() {
				err = fmt.Errorf("%s exited: %v", p.name, p.err)
				deadline = time.Now()
			}
		}
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, p := range procs {
				fmt.Fprintf(&logs, "--- %s:\n%s\n", p.name, p.tail())
			}
			t.Fatalf("%s: not within %v: %v\n%s", what, timeout, err, logs.String())
		}
		<-tick.C
	}
}

func get(c *http.Client, url string) ([]byte, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return body, nil
}

// etcdCluster is three etcd members on loopback, each on a "machine" of
// its own (a directory standing for its /etc/skiff and /var/lib/etcd),
// run from deploy/systemd/etcd.service with the settings etcd.env gives.
type etcdCluster struct {
	dir, pki             string
	members              []string
	clientURLs, peerURLs []string
	procs                map[string]*process
	client               *http.Client
}

// newEtcdCluster lays out the members' machines: /etc/skiff/pki with the
// member's own pair under the unit's names, as docs/operations.md copies
// them. ports holds a client and a peer port per member.
func newEtcdCluster(t *testing.T, dir, pki string, ports []int) *etcdCluster {
	t.Helper()
	c := &etcdCluster{dir: dir, pki: pki, members: []string{"cp1", "cp2", "cp3"}, procs: map[string]*process{}}
	for i, m := range c.members {
		c.clientURLs = append(c.clientURLs, fmt.Sprintf("https://127.0.0.1:%d", ports[2*i]))
		c.peerURLs = append(c.peerURLs, fmt.Sprintf("https://127.0.0.1:%d", ports[2*i+1]))
		machine := c.machine(m)
		if err := os.MkdirAll(filepath.Join(machine, "pki"), 0o700); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(pki, "etcd-ca.crt"), filepath.Join(machine, "pki", "etcd-ca.crt"), 0o644)
		for _, kind := range []string{"server", "peer"} {
			copyFile(t, filepath.Join(pki, "etcd-"+m+"-"+kind+".crt"), filepath.Join(machine, "pki", "etcd-"+kind+".crt"), 0o644)
			copyFile(t, filepath.Join(pki, "etcd-"+m+"-"+kind+".key"), filepath.Join(machine, "pki", "etcd-"+kind+".key"), 0o600)
		}
	}
	c.client = tlsClient(t, filepath.Join(pki, "etcd-ca.crt"), filepath.Join(pki, "apiserver-etcd-client.crt"), filepath.Join(pki, "apiserver-etcd-client.key"))
	return c
}

func (c *etcdCluster) machine(m string) string { return filepath.Join(c.dir, m) }

// dataDir is the member's /var/lib/etcd/skiff.
func (c *etcdCluster) dataDir(m string) string { return filepath.Join(c.machine(m), "data") }

// initialCluster is etcd.env's ETCD_INITIAL_CLUSTER.
func (c *etcdCluster) initialCluster() string {
	var cluster []string
	for i, m := range c.members {
		cluster = append(cluster, m+"="+c.peerURLs[i])
	}
	return strings.Join(cluster, ",")
}

// start starts the three members and waits until each is healthy.
func (c *etcdCluster) start(t *testing.T) {
	t.Helper()
	for i, m := range c.members {
		env := []string{
			"ETCD_NAME=" + m,
			"ETCD_LISTEN_CLIENT_URLS=" + c.clientURLs[i],
			"ETCD_ADVERTISE_CLIENT_URLS=" + c.clientURLs[i],
			"ETCD_LISTEN_PEER_URLS=" + c.peerURLs[i],
			"ETCD_INITIAL_ADVERTISE_PEER_URLS=" + c.peerURLs[i],
			"ETCD_INITIAL_CLUSTER=" + c.initialCluster(),
			"ETCD_INITIAL_CLUSTER_TOKEN=skiff-deploytest",
			"ETCD_INITIAL_CLUSTER_STATE=new",
			"ETCD_LOG_LEVEL=warn",
		}
		c.procs[m] = startUnit(t, "etcd-"+m, "etcd.service",
			[][2]string{{"/etc/skiff/", c.machine(m) + "/"}, {"/var/lib/etcd/skiff", c.dataDir(m)}}, env, c.dir)
	}
	for _, u := range c.clientURLs {
		waitFor(t, "etcd "+u+" healthy", 60*time.Second, c.list(), func() error {
			body, err := get(c.client, u+"/health")
			if err == nil && !bytes.Contains(body, []byte(`"health":"true"`)) {
				err = fmt.Errorf("health: %s", body)
			}
			return err
		})
	}
}

func (c *etcdCluster) list() []*process {
	var out []*process
	for _, m := range c.members {
		if p := c.procs[m]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

func (c *etcdCluster) stop() {
	for _, p := range c.list() {
		p.stop()
	}
}

// post sends a request of etcd's JSON gateway (/v3/...) to member i.
func (c *etcdCluster) post(t *testing.T, i int, path string, req any, resp any) error {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.client.Post(c.clientURLs[i]+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer r.Body.Close()
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %d %s", path, r.StatusCode, data)
	}
	return json.Unmarshal(data, resp)
}

// The exported side, for other packages' tests that run the deployed shape
// (e2e/multinode).

// Process is a daemon started by StartUnit or StartProcess.
type Process = process

// Stop kills the process (SIGKILL, as a machine's loss) and waits for it.
func (p *process) Stop() { p.stop() }

// Name is the name the process was started under.
func (p *process) Name() string { return p.name }

// Tail is the end of the process's log.
func (p *process) Tail() string { return p.tail() }

// ExitedUnexpectedly reports whether the process ended without Stop.
func (p *process) ExitedUnexpectedly() bool { return p.exitedUnexpectedly() }

// Repo is the repository's root.
func Repo() string { return repo }

// StartUnit runs the ExecStart of deploy/systemd/unitFile as systemd would,
// with the install layout moved by replacements (see startUnit); extra
// arguments are appended to its command line, and prefix, when not empty,
// is run in front of it (e.g. ip netns exec NAME).
func StartUnit(t *testing.T, name, unitFile string, replacements [][2]string, env, extra, prefix []string, dir string) *Process {
	t.Helper()
	return startUnitWith(t, name, unitFile, replacements, env, extra, prefix, dir)
}

// FreePorts returns n TCP ports free on 127.0.0.1.
func FreePorts(t *testing.T, n int) []int { return freePorts(t, n) }

// TLSClient is an HTTPS client with a client certificate, trusting ca.
func TLSClient(t *testing.T, ca, cert, key string) *http.Client { return tlsClient(t, ca, cert, key) }

// WaitFor polls cond until it returns nil, failing the test at the
// deadline or when one of procs exits unexpectedly, with their logs.
func WaitFor(t *testing.T, what string, timeout time.Duration, procs []*Process, cond func() error) {
	t.Helper()
	waitFor(t, what, timeout, procs, cond)
}

// Get fetches url with c and fails unless it answers 200.
func Get(c *http.Client, url string) ([]byte, error) { return get(c, url) }

// EtcdCluster is three etcd members on loopback with TLS, from the etcd
// unit (see etcdCluster).
type EtcdCluster = etcdCluster

// NewEtcdCluster lays out three members cp1..cp3 under dir with the pairs
// of `skiffctl certs --etcd-member cpN=127.0.0.1` in pki; ports holds a
// client and a peer port per member.
func NewEtcdCluster(t *testing.T, dir, pki string, ports []int) *EtcdCluster {
	t.Helper()
	return newEtcdCluster(t, dir, pki, ports)
}

// Start starts the members and waits until each is healthy.
func (c *etcdCluster) Start(t *testing.T) { t.Helper(); c.start(t) }

// Members are the members' names.
func (c *etcdCluster) Members() []string { return c.members }

// ClientURLs are the members' client URLs, in Members' order.
func (c *etcdCluster) ClientURLs() []string { return c.clientURLs }

// Process is member m's process.
func (c *etcdCluster) Process(m string) *Process { return c.procs[m] }

// Processes are the members' processes.
func (c *etcdCluster) Processes() []*Process { return c.list() }

// StartProcess runs args (the first is the program) as a daemon named name,
// its output appended to dir/name.log, stopped (SIGKILL) at the test's end.
func StartProcess(t *testing.T, name, dir string, env []string, args ...string) *Process {
	t.Helper()
	p := &process{name: name, log: filepath.Join(dir, name+".log")}
	log, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.exited = make(chan struct{})
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.stop)
	return p
}

// LogFile is the file the process's output goes to.
func (p *process) LogFile() string { return p.log }
