// Command skiff-pause is the process of a pod's sandbox container, as
// upstream's pause: PID 1 of the PID namespace that the containers of a
// pod with shareProcessNamespace share. It reaps the processes orphaned in
// that namespace (they are re-parented to it) and exits on SIGINT or
// SIGTERM. The kubelet bind-mounts it into an empty root filesystem, so it
// must be linked statically: it uses nothing but the standard library's
// os, os/signal and syscall (make build puts it next to skiff-kubelet).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: skiff-pause should be the first process")
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		// Signals coalesce: reap every child that has exited.
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
