package deploytest

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEtcdRestoreThreeMembers follows docs/operations.md's restore on a
// three-member cluster run from the etcd unit: keys written, a snapshot
// saved from one member with skiffctl, every member stopped, the snapshot
// restored on each member with its own name and peer URL, the whole
// membership and a new token and a bumped revision, moved to the member's
// data directory, and the members started again with their unchanged
// etcd.env. Every key is there on every member, above the bumped
// revision.
func TestEtcdRestoreThreeMembers(t *testing.T) {
	requireBinaries(t)
	dir := t.TempDir()
	skiffctl := filepath.Join(repo, "bin", "skiffctl")
	args := []string{"certs", "--dir", filepath.Join(dir, "pki"), "--node", "n1",
		"--etcd-member", "cp1=127.0.0.1", "--etcd-member", "cp2=127.0.0.1", "--etcd-member", "cp3=127.0.0.1"}
	if out, err := exec.Command(skiffctl, args...).CombinedOutput(); err != nil {
		t.Fatalf("skiffctl certs: %v\n%s", err, out)
	}
	pki := filepath.Join(dir, "pki")
	cl := newEtcdCluster(t, dir, pki, freePorts(t, 6))
	cl.start(t)

	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	const keys = 50
	var put struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	for i := range keys {
		req := map[string]string{"key": b64(fmt.Sprintf("/registry/configmaps/default/cm-%02d", i)), "value": b64(fmt.Sprint(i))}
		if err := cl.post(t, 0, "/v3/kv/put", req, &put); err != nil {
			t.Fatal(err)
		}
	}
	lastRev, err := strconv.ParseInt(put.Header.Revision, 10, 64)
	if err != nil {
		t.Fatalf("revision %q: %v", put.Header.Revision, err)
	}

	backup := filepath.Join(dir, "backup.db")
	out, err := exec.Command(skiffctl, "etcd", "snapshot", "save", backup, "--endpoint", cl.clientURLs[0],
		"--cacert", filepath.Join(pki, "etcd-ca.crt"),
		"--cert", filepath.Join(pki, "apiserver-etcd-client.crt"), "--key", filepath.Join(pki, "apiserver-etcd-client.key")).CombinedOutput()
	if err != nil {
		t.Fatalf("skiffctl etcd snapshot save: %v\n%s", err, out)
	}
	cl.stop()

	const bump = 1000000
	for i, m := range cl.members {
		restored := cl.dataDir(m) + ".restored"
		out, err := exec.Command(skiffctl, "etcd", "snapshot", "restore", backup, "--data-dir", restored,
			"--name", m, "--initial-advertise-peer-urls", cl.peerURLs[i], "--initial-cluster", cl.initialCluster(),
			"--initial-cluster-token", "skiff-deploytest-restored-1",
			"--bump-revision", strconv.Itoa(bump), "--mark-compacted").CombinedOutput()
		if err != nil {
			t.Fatalf("skiffctl etcd snapshot restore on %s: %v\n%s", m, err, out)
		}
		if err := os.Rename(cl.dataDir(m), cl.dataDir(m)+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(restored, cl.dataDir(m)); err != nil {
			t.Fatal(err)
		}
	}
	cl.start(t)

	for i, m := range cl.members {
		var rng struct {
			Header struct {
				Revision string `json:"revision"`
			} `json:"header"`
			Count string `json:"count"`
		}
		// A serializable read answers from the member's own copy.
		req := map[string]any{"key": b64("/registry/"), "range_end": b64("/registry0"), "count_only": true, "serializable": true}
		waitFor(t, m+" has every key", 30*time.Second, cl.list(), func() error {
			if err := cl.post(t, i, "/v3/kv/range", req, &rng); err != nil {
				return err
			}
			if rng.Count != strconv.Itoa(keys) {
				return fmt.Errorf("%s keys, want %d", rng.Count, keys)
			}
			return nil
		})
		rev, _ := strconv.ParseInt(rng.Header.Revision, 10, 64)
		if rev < lastRev+bump {
			t.Errorf("%s: revision %d after the restore, want at least %d + %d", m, rev, lastRev, bump)
		}
	}
	var members struct {
		Members []struct {
			Name     string   `json:"name"`
			PeerURLs []string `json:"peerURLs"`
		} `json:"members"`
	}
	if err := cl.post(t, 2, "/v3/cluster/member/list", map[string]any{}, &members); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range members.Members {
		got = append(got, m.Name+"="+strings.Join(m.PeerURLs, ","))
	}
	if len(got) != 3 {
		t.Errorf("members after the restore: %v, want %s", got, cl.initialCluster())
	}
}
