package e2e

import (
	"os"
	"testing"

	"skiff.dev/kubelet/pkg/logs"
)

// TestMain lets containerd's shim start this test binary as the kubelet's
// logging driver, as it starts skiff-kubelet in production.
func TestMain(m *testing.M) {
	if logs.IsDriver(os.Args) {
		os.Exit(logs.DriverMain(os.Args[2]))
	}
	os.Exit(m.Run())
}
