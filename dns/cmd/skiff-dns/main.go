// Command skiff-dns serves the cluster's DNS names: CoreDNS with its
// kubernetes plugin, and the kube-dns Service pointing at it.
package main

import (
	"os"

	"skiff.dev/component-base/signals"
	"skiff.dev/dns/app"
)

func main() {
	if err := app.NewCommand(signals.Context()).Execute(); err != nil {
		os.Exit(1)
	}
}
