package deploytest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
