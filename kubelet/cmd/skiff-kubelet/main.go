// Command skiff-kubelet runs the pods bound to its node. Started by
// containerd's shim as "skiff-kubelet skiff-log-driver <file>", it is the
// logging driver that writes one container's log file.
package main

import (
	"os"

	"skiff.dev/component-base/signals"
	"skiff.dev/kubelet/app"
	"skiff.dev/kubelet/pkg/logs"
)

func main() {
	if logs.IsDriver(os.Args) {
		os.Exit(logs.DriverMain(os.Args[2]))
	}
	if err := app.NewCommand(signals.Context()).Execute(); err != nil {
		os.Exit(1)
	}
}
