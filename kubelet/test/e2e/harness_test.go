package e2e

import (
	"testing"
	"time"

	"skiff.dev/kubelet/test/harness"
)

// The end-to-end tests use the shared harness; these names keep them
// short.

type Containerd = harness.Containerd

func requireTools(t *testing.T)                { t.Helper(); harness.RequireTools(t) }
func randHex(n int) string                     { return harness.RandHex(n) }
func startContainerd(t *testing.T) *Containerd { t.Helper(); return harness.StartContainerd(t) }
func startRegistry(t *testing.T) string        { t.Helper(); return harness.StartRegistry(t) }
func buildBusyboxImage(t *testing.T) string    { t.Helper(); return harness.BuildBusyboxImage(t) }
func unmountUnder(t *testing.T, dir string)    { harness.UnmountUnder(t, dir) }
func mountsUnder(dir string) []string          { return harness.MountsUnder(dir) }

func startRegistryWith(t *testing.T, user, password string) string {
	t.Helper()
	return harness.StartRegistryWith(t, user, password)
}

func pushImage(t *testing.T, layout, registry, repo string, creds ...string) {
	t.Helper()
	harness.PushImage(t, layout, registry, repo, creds...)
}

func poll(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	harness.Poll(t, timeout, what, cond)
}
