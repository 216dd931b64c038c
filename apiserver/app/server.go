package app

import (
	"context"
	"flag"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/component-base/flagsfile"
	"skiff.dev/component-base/signals"
)

// NewAPIServerCommand builds the skiff-apiserver command.
func NewAPIServerCommand() *cobra.Command {
	opts := server.NewOptions()
	cmd := &cobra.Command{
		Use:          "skiff-apiserver",
		Short:        "skiff's API server: the Kubernetes API over etcd, with watch",
		Long:         longHelp(),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(signals.Context(), opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	fs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(fs)
	cmd.Flags().AddGoFlagSet(fs)
	flagsfile.Install(cmd)
	return cmd
}

// longHelp describes the server and lists the API group-versions it
// serves, from the resource table.
func longHelp() string {
	var b strings.Builder
	b.WriteString("skiff-apiserver serves the Kubernetes API over HTTPS, stores objects in etcd (embedded\n" +
		"by default) and streams changes to watchers. kubectl and client-go work against it.\n\nIt serves:")
	line := len("It serves:")
	for i, gv := range server.ServedGroupVersions() {
		word := " " + gv
		if i > 0 {
			b.WriteString(",")
			line++
		}
		if line+len(word) > 90 {
			b.WriteString("\n ")
			line = 1
		}
		b.WriteString(word)
		line += len(word)
	}
	b.WriteString(";\nthe groups of CustomResourceDefinitions, and APIServices through the aggregation layer.\n" +
		"metrics.k8s.io is built in unless --metric-resolution=0.")
	return b.String()
}

// Run builds the server and serves until ctx ends.
func Run(ctx context.Context, opts *server.Options) error {
	ctx = klog.NewContext(ctx, klog.Background().WithName("apiserver"))
	s, err := server.Setup(ctx, opts)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
