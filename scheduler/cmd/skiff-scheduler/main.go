// Command skiff-scheduler assigns pending pods to nodes.
package main

import (
	"os"

	"skiff.dev/component-base/signals"
	"skiff.dev/scheduler/app"
)

func main() {
	if err := app.NewCommand(signals.Context()).Execute(); err != nil {
		os.Exit(1)
	}
}
