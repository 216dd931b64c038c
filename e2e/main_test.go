package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"skiff.dev/kubelet/pkg/logs"
)

// inNetnsEnv marks the test binary re-executed inside its own network
// namespace.
const inNetnsEnv = "SKIFF_E2E_IN_NETNS"

// TestMain runs the tests inside a network namespace of their own (see the
// package doc), and lets containerd's shim start this binary as the
// kubelet's logging driver, as it starts skiff-kubelet in production.
func TestMain(m *testing.M) {
	if logs.IsDriver(os.Args) {
		os.Exit(logs.DriverMain(os.Args[2]))
	}
	if os.Geteuid() != 0 || os.Getenv(inNetnsEnv) != "" {
		if os.Getenv(inNetnsEnv) != "" {
			if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: bringing up lo: %v: %s\n", err, out)
				os.Exit(1)
			}
		}
		// Not root: every test skips (requireRoot).
		os.Exit(m.Run())
	}
	os.Exit(reexecInNetns())
}

// reexecInNetns runs this binary again, with the same arguments, in a new
// network namespace, and returns its exit code.
func reexecInNetns() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--", self}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), inNetnsEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "e2e: unshare --net (util-linux): %v\n", err)
		return 1
	}
	return 0
}
