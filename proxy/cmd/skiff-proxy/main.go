// Command skiff-proxy programs the node's iptables so that Service
// addresses reach the Services' endpoints.
package main

import (
	"os"

	"skiff.dev/component-base/signals"
	"skiff.dev/proxy/app"
)

func main() {
	if err := app.NewCommand(signals.Context()).Execute(); err != nil {
		os.Exit(1)
	}
}
