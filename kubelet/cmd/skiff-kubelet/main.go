// Command skiff-kubelet runs the pods bound to its node.
package main

import (
	"os"

	"skiff.dev/component-base/signals"
	"skiff.dev/kubelet/app"
)

func main() {
	if err := app.NewCommand(signals.Context()).Execute(); err != nil {
		os.Exit(1)
	}
}
