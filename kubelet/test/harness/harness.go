package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/namespaces"
	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"
)

// T is what the harness needs of a test; *testing.T has it, and Main
// gives it to programs that are not tests (the benchmark).
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Skip(args ...any)
	Skipf(format string, args ...any)
	Cleanup(f func())
	TempDir() string
	Failed() bool
}

// RequireTools skips the test when it cannot run here: it needs root and
// the Debian packages containerd, runc, containernetworking-plugins,
// docker-registry, skopeo and busybox-static.
func RequireTools(t T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, bridges, containers)")
	}
	for _, p := range []string{"containerd", "containerd-shim-runc-v2", "runc", "docker-registry", "skopeo", "ip"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("needs %s in PATH (Debian packages containerd, runc, docker-registry, skopeo, iproute2)", p)
		}
	}
	for _, p := range []string{"/bin/busybox", "/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback", "/usr/lib/cni/portmap"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("needs %s (Debian packages busybox-static, containernetworking-plugins)", p)
		}
	}
}

// RandHex returns n random bytes in hex.
func RandHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// FreePort returns a free loopback TCP port.
func FreePort(t T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Poll calls cond until it returns true, failing the test at the deadline
// with the last message cond gave.
func Poll(t T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, last)
	}
}

// Containerd is a containerd daemon of the test's own.
type Containerd struct {
	Dir     string
	Address string
	Client  *containerd.Client
}

// StartContainerd runs containerd with its root, state and socket in a
// fresh directory. Cleanup kills every task it still runs, stops it and
// unmounts whatever is left under its directory.
func StartContainerd(t T) *Containerd {
	t.Helper()
	dir, err := os.MkdirTemp("", "skctd")
	if err != nil {
		t.Fatal(err)
	}
	c := &Containerd{Dir: dir, Address: filepath.Join(dir, "c.sock")}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.Address, c.Address+".ttrpc")
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		c.KillAll(t)
		if c.Client != nil {
			_ = c.Client.Close()
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logf.Close()
		UnmountUnder(t, dir)
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil {
				t.Logf("containerd log (tail):\n%s", Tail(string(b), 40))
			}
		}
		_ = os.RemoveAll(dir)
	})
	Poll(t, 30*time.Second, "containerd to answer", func() (bool, string) {
		if c.Client == nil {
			cl, err := containerd.New(c.Address, containerd.WithTimeout(time.Second))
			if err != nil {
				return false, err.Error()
			}
			c.Client = cl
		}
		_, err := c.Client.Version(context.Background())
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return c
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// KillAll removes every task and container in every namespace, so no shim
// outlives the test.
func (c *Containerd) KillAll(t T) {
	if c.Client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nss, err := c.Client.NamespaceService().List(ctx)
	if err != nil {
		t.Logf("listing containerd namespaces: %v", err)
		return
	}
	for _, ns := range nss {
		nctx := namespaces.WithNamespace(ctx, ns)
		list, err := c.Client.Containers(nctx)
		if err != nil {
			continue
		}
		for _, ctr := range list {
			if task, err := ctr.Task(nctx, nil); err == nil {
				_, _ = task.Delete(nctx, containerd.WithProcessKill)
			}
			_ = ctr.Delete(nctx, containerd.WithSnapshotCleanup)
		}
		// Containers without a cgroup path of their own (ctr run) live in
		// /<namespace>/<id>, and the tests' kubelets use /<namespace> as
		// their cgroup root: none of it outlives the test.
		RemoveCgroups(t, "/"+ns)
	}
}

// UnmountUnder lazily unmounts every mount below dir, deepest first.
func UnmountUnder(t T, dir string) {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && strings.HasPrefix(f[1], dir) {
			points = append(points, f[1])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		if err := unix.Unmount(points[i], unix.MNT_DETACH); err != nil {
			t.Logf("unmounting %s: %v", points[i], err)
		}
	}
}

// MountsUnder lists the mount points below dir.
func MountsUnder(dir string) []string {
	data, _ := os.ReadFile("/proc/self/mounts")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && strings.HasPrefix(f[1], dir) {
			out = append(out, f[1])
		}
	}
	return out
}

// StartRegistry runs docker-registry on a free loopback port with its
// storage in a temporary directory, and returns host:port.
func StartRegistry(t T) string { return StartRegistryWith(t, "", "") }

// StartRegistryWith is StartRegistry; when user is not empty, the
// registry asks for that user and password (htpasswd, basic auth).
func StartRegistryWith(t T, user, password string) string {
	t.Helper()
	dir := t.TempDir()
	auth := ""
	if user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			t.Fatal(err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: skiff\n    path: %s\n", htpasswd)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
%s`, filepath.Join(dir, "data"), addr, auth)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command("docker-registry", "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	Poll(t, 20*time.Second, "the registry to serve", func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("docker-registry exited: %s", out.String())
		default:
		}
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK || (user != "" && resp.StatusCode == http.StatusUnauthorized), resp.Status
	})
	return addr
}

// BusyboxApplets get a symlink to /bin/busybox in the test image.
var BusyboxApplets = []string{"sh", "httpd", "echo", "mkdir", "sleep", "cat", "true", "false", "env", "ls", "wget", "id", "touch", "grep", "head", "tail"}

// BuildBusyboxImage writes an OCI image layout with one layer (Debian's
// static busybox and its applet links) and returns its directory.
func BuildBusyboxImage(t T) string {
	t.Helper()
	dir := t.TempDir()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	now := time.Unix(0, 0)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"bin/", "tmp/", "etc/"} {
		must(tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: now}))
	}
	must(tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bb)), ModTime: now}))
	_, err = tw.Write(bb)
	must(err)
	for _, a := range BusyboxApplets {
		must(tw.WriteHeader(&tar.Header{Name: "bin/" + a, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777, ModTime: now}))
	}
	must(tw.Close())
	diffID := digest.FromBytes(layer.Bytes())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(layer.Bytes())
	must(err)
	must(zw.Close())

	blobs := filepath.Join(dir, "blobs", "sha256")
	must(os.MkdirAll(blobs, 0o755))
	writeBlob := func(mediaType string, data []byte) ocispec.Descriptor {
		d := digest.FromBytes(data)
		must(os.WriteFile(filepath.Join(blobs, d.Encoded()), data, 0o644))
		return ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(data))}
	}
	layerDesc := writeBlob(ocispec.MediaTypeImageLayerGzip, gz.Bytes())
	cfg, err := json.Marshal(ocispec.Image{
		Platform: ocispec.Platform{Architecture: "amd64", OS: "linux"},
		Config: ocispec.ImageConfig{
			Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Cmd: []string{"sh"},
		},
		RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{diffID}},
	})
	must(err)
	cfgDesc := writeBlob(ocispec.MediaTypeImageConfig, cfg)
	manifest, err := json.Marshal(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: cfgDesc, Layers: []ocispec.Descriptor{layerDesc},
	})
	must(err)
	mDesc := writeBlob(ocispec.MediaTypeImageManifest, manifest)
	mDesc.Annotations = map[string]string{ocispec.AnnotationRefName: "latest"}
	index, err := json.Marshal(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{mDesc},
	})
	must(err)
	must(os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644))
	must(os.WriteFile(filepath.Join(dir, ocispec.ImageLayoutFile), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644))
	return dir
}

// PushImage copies the OCI layout into the registry as repo:latest.
func PushImage(t T, layout, registry, repo string, creds ...string) {
	t.Helper()
	args := []string{"copy", "--dest-tls-verify=false"}
	if len(creds) == 2 {
		args = append(args, "--dest-creds", creds[0]+":"+creds[1])
	}
	args = append(args, "oci:"+layout+":latest", "docker://"+registry+"/"+repo+":latest")
	out, err := exec.Command("skopeo", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("skopeo copy: %v\n%s", err, out)
	}
}

// Run runs a command and fails the test on error.
func Run(t T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
