// Command skiffctl controls a skiff cluster; see package skiff.dev/ctl/app.
package main

import (
	"context"
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
		os.Exit(1)
	}
}
