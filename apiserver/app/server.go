package app

import (
	"context"
	"flag"

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
		Use:   "skiff-apiserver",
		Short: "skiff's API server: the Kubernetes API over etcd, with watch",
		Long: `skiff-apiserver serves the Kubernetes API (core/v1, apps/v1, coordination.k8s.io/v1,
discovery.k8s.io/v1, rbac.authorization.k8s.io/v1) over HTTPS, stores objects in etcd
(embedded by default) and streams changes to watchers. kubectl and client-go work against it.`,
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

// Run builds the server and serves until ctx ends.
func Run(ctx context.Context, opts *server.Options) error {
	ctx = klog.NewContext(ctx, klog.Background().WithName("apiserver"))
	s, err := server.Setup(ctx, opts)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
