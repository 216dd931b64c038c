// Command skiffctl controls a skiff cluster; see package skiff.dev/ctl/app.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"skiff.dev/ctl/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.NewSkiffctlCommand().ExecuteContext(ctx)
	stop()
	klog.Flush()
	if err != nil {
		app.PrintError(os.Stderr, err)
		// A remote command's exit code (skiffctl exec), as kubectl.
		var status interface{ ExitStatus() int }
		if errors.As(err, &status) {
			os.Exit(status.ExitStatus())
		}
		os.Exit(1)
	}
}
