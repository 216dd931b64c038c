package app

import (
	"flag"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// NewSkiffctlCommand returns the skiffctl root command with its subcommands.
func NewSkiffctlCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skiffctl",
		Short: "skiffctl controls a skiff cluster",
		Long: "skiffctl controls a skiff cluster: it sets up the cluster's certificates\n" +
			"and kubeconfigs, and talks to the API server.",
		SilenceUsage:      true,
		Args:              cobra.NoArgs,
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	addKlogFlags(cmd)
	cmd.AddCommand(NewCertsCommand())
	return cmd
}

// addKlogFlags exposes klog's verbosity flags (-v, --vmodule) on every command.
func addKlogFlags(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "v" || f.Name == "vmodule" {
			cmd.PersistentFlags().AddGoFlag(f)
		}
	})
}
