// Command skiff-controller-manager runs the control loops that keep the
// cluster's actual state equal to its desired state.
package main

import (
	"os"

	"skiff.dev/component-base/signals"
	"skiff.dev/controller-manager/app"
)

func main() {
	if err := app.NewCommand(signals.Context()).Execute(); err != nil {
		os.Exit(1)
	}
}
