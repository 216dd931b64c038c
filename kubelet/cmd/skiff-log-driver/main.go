// Command skiff-log-driver is skiff-kubelet's container logging driver
// as a small program of its own: containerd's shim starts it as
// "skiff-log-driver skiff-log-driver <file>" with the container's stdout
// and stderr on file descriptors 3 and 4, and it writes them to <file>
// in the CRI log format (package logs). skiff-kubelet uses it when it
// lies next to the kubelet's executable; otherwise the kubelet starts
// itself in this role, which costs a start of a much larger program per
// container.
package main

import (
	"fmt"
	"os"

	"skiff.dev/kubelet/pkg/logs"
)

func main() {
	if !logs.IsDriver(os.Args) {
		fmt.Fprintf(os.Stderr, "usage: %s %s <log file> (started by containerd's shim)\n", os.Args[0], logs.DriverArg)
		os.Exit(2)
	}
	os.Exit(logs.DriverMain(os.Args[2]))
}
