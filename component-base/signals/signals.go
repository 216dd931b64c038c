// Package signals turns SIGINT and SIGTERM into the cancellation of the
// daemon's root context, in one place. A second signal exits at once.
package signals

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Context returns a context cancelled on the first SIGINT or SIGTERM; the
// second one exits the process with status 1.
func Context() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		cancel()
		<-ch
		os.Exit(1)
	}()
	return ctx
}
