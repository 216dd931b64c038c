package netnstest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/vishvananda/netlink"
)

// envMarker is set in the re-executed child.
const envMarker = "SKIFF_PROXY_NETNS_CHILD"

// InNetNS reports whether this process is the child running in its own
// network namespace.
func InNetNS() bool { return os.Getenv(envMarker) == "1" }

// Reexec, in the parent, runs this program again under `unshare --net`
// and returns its exit code with ran=true; in the child it brings up
// loopback and returns ran=false, so the caller goes on. Without root it
// returns ran=false and does nothing.
func Reexec() (ran bool, code int, err error) {
	if InNetNS() {
		link, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(link)
		}
		if err != nil {
			return false, 0, fmt.Errorf("bringing up lo in the test network namespace: %w", err)
		}
		return false, 0, nil
	}
	if os.Geteuid() != 0 {
		return false, 0, nil
	}
	self, err := os.Executable()
	if err != nil {
		return true, 1, err
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--", self}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envMarker+"=1")
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return true, ee.ExitCode(), nil
		}
		return true, 1, fmt.Errorf("unshare --net: %w", err)
	}
	return true, 0, nil
}

// Main is a TestMain: the tests run in a network namespace of their own
// when the binary runs as root.
func Main(m *testing.M) {
	ran, code, err := Reexec()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Require skips t unless it runs in its own network namespace (as root
// through Main).
func Require(t testing.TB) {
	t.Helper()
	if !InNetNS() {
		t.Skip("needs root: runs only in a network namespace of its own (see netnstest.Main)")
	}
}
