// Command skiff-apiserver is skiff's API server.
package main

import (
	"os"

	"k8s.io/klog/v2"

	"skiff.dev/apiserver/app"
)

func main() {
	err := app.NewAPIServerCommand().Execute()
	klog.Flush()
	if err != nil {
		os.Exit(1)
	}
}
