package deploytest

import (
	"bytes"
	"context"
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
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	p := &process{name: name, log: filepath.Join(dir, name+".log")}
	log, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p.cmd = exec.Command(binary, args[1:]...)
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

// TestControlPlaneAsDeployed runs the control plane of docs/operations.md
// on loopback from the units' own command lines and the certificates of
// one skiffctl certs run: three etcd members with TLS on both ports (the
// etcd unit, its variables as etcd.env gives them, each member's pair
// copied under the unit's names), and two API servers (their unit, with a
// flags file naming the three members). Both serve, and with one etcd
// member killed a write through one API server is read through the other.
// (The kubernetes Service's endpoints per API server need an address per
// server, which one machine's loopback cannot give: the API server's
// TestKubernetesEndpointsFollowLiveServers covers them.)
func TestControlPlaneAsDeployed(t *testing.T) {
	requireBinaries(t)
	dir := t.TempDir()
	ports := freePorts(t, 8)
	apiPorts := ports[6:]
	out, err := exec.Command(filepath.Join(repo, "bin", "skiffctl"), "certs",
		"--dir", filepath.Join(dir, "pki"), "--kubeconfig-dir", dir,
		"--server", fmt.Sprintf("https://127.0.0.1:%d", apiPorts[0]), "--node", "n1",
		"--etcd-member", "cp1=127.0.0.1", "--etcd-member", "cp2=127.0.0.1", "--etcd-member", "cp3=127.0.0.1").CombinedOutput()
	if err != nil {
		t.Fatalf("skiffctl certs: %v\n%s", err, out)
	}
	pki := filepath.Join(dir, "pki")

	cl := newEtcdCluster(t, dir, pki, ports[:6])
	cl.start(t)
	etcds, clientURLs := cl.procs, cl.clientURLs
	procs := append([]*process(nil), cl.list()...)

	for i, port := range apiPorts {
		// advertise-address stays empty: the machine's first address (a
		// loopback one is refused), which only goes into the Endpoints.
		flags := fmt.Sprintf("etcd-servers: [%s]\nbind-address: 127.0.0.1\nsecure-port: %d\naudit-log-path: %s\n",
			strings.Join(clientURLs, ", "), port, filepath.Join(dir, fmt.Sprintf("audit-%d.log", i)))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("apiserver-%d.yaml", i)), []byte(flags), 0o644); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, startUnit(t, fmt.Sprintf("apiserver-%d", i), "skiff-apiserver.service",
			[][2]string{{"/etc/skiff/apiserver.yaml", filepath.Join(dir, fmt.Sprintf("apiserver-%d.yaml", i))}, {"/etc/skiff/", dir + "/"}}, nil, dir))
	}
	admin := tlsClient(t, filepath.Join(pki, "ca.crt"), filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	api := func(i int) string { return fmt.Sprintf("https://127.0.0.1:%d", apiPorts[i]) }
	for i := range apiPorts {
		waitFor(t, api(i)+" ready", 90*time.Second, procs, func() error { _, err := get(admin, api(i)+"/readyz"); return err })
	}
	// One member down: the other two are a quorum.
	etcds["cp2"].stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deployed"},"data":{"k":"v"}}`
	waitFor(t, "a write with one etcd member down", 30*time.Second, procs, func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, api(0)+"/api/v1/namespaces/default/configmaps", strings.NewReader(cm))
		req.Header.Set("Content-Type", "application/json")
		resp, err := admin.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusConflict {
			return fmt.Errorf("POST: %d %s", resp.StatusCode, body)
		}
		return nil
	})
	body, err := get(admin, api(1)+"/api/v1/namespaces/default/configmaps/deployed")
	if err != nil || !bytes.Contains(body, []byte(`"k":"v"`)) {
		t.Fatalf("the ConfigMap through the other API server: %v %s", err, body)
	}
}
