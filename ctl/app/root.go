package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"skiff.dev/ctl/pkg/cli"
)

// NewSkiffctlCommand returns the skiffctl root command with its subcommands.
func NewSkiffctlCommand() *cobra.Command {
	flags := &cli.ConfigFlags{}
	verbosity := 0
	f := cli.NewFactory(flags, func() int { return verbosity }, io.Discard)
	cmd := &cobra.Command{
		Use:   "skiffctl",
		Short: "skiffctl controls a skiff cluster",
		Long: "skiffctl controls a skiff cluster: it sets up the cluster's certificates\n" +
			"and kubeconfigs, and talks to the API server as kubectl does.",
		SilenceUsage:      true,
		SilenceErrors:     true,
		Args:              cobra.NoArgs,
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			f.ErrOut = cmd.ErrOrStderr()
			return setKlogVerbosity(verbosity)
		},
	}
	cmd.PersistentFlags().IntVarP(&verbosity, "v", "v", 0,
		"Log level: 6 prints each request and its response status, 7 the headers, 8 the bodies, 9 and up each request as a curl command.")
	flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		NewCertsCommand(),
		NewEtcdCommand(),
		NewConfigCommand(flags),
		NewGetCommand(f),
		NewDescribeCommand(f),
		NewCreateCommand(f),
		NewApplyCommand(f),
		NewDeleteCommand(f),
		NewLabelCommand(f),
		NewAnnotateCommand(f),
		NewScaleCommand(f),
		NewEditCommand(f),
		NewEventsCommand(f),
		NewVersionCommand(f),
		NewAPIResourcesCommand(f),
		NewExplainCommand(f),
		NewWaitCommand(f),
		NewRolloutCommand(f),
		NewLogsCommand(f),
		NewTraceCommand(f),
		NewWhyCommand(f),
		NewTokenCommand(f),
		NewCordonCommand(f),
		NewUncordonCommand(f),
		NewDrainCommand(f),
		NewExecCommand(f),
		NewPortForwardCommand(f),
		NewRunCommand(f),
		NewExposeCommand(f),
		NewJoinCommand(),
		NewCompletionCommand(),
	)
	registerFlagCompletions(cmd, f, flags)
	explainErrors(cmd, f)
	return cmd
}

// registerFlagCompletions completes -n with the server's namespaces and
// --context with the kubeconfig's contexts.
func registerFlagCompletions(cmd *cobra.Command, f *cli.Factory, flags *cli.ConfigFlags) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return objectNames(c.Context(), f, "namespaces", prefix), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		cfg, err := loadKubeconfig(flags)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return contextNames(cfg), cobra.ShellCompDirectiveNoFileComp
	})
}

// maxKlogVerbosity caps the level passed to klog: from 6 on, client-go
// logs requests itself, which skiffctl's own round tripper already does.
const maxKlogVerbosity = 5

// setKlogVerbosity passes -v on to klog, for the log lines of the libraries.
func setKlogVerbosity(v int) error {
	v = min(v, maxKlogVerbosity)
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	return fs.Set("v", strconv.Itoa(v))
}

// explainErrors makes every command's errors actionable (cli.Explain).
func explainErrors(cmd *cobra.Command, f *cli.Factory) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			return cli.Explain(run(c, args), f.Server())
		}
	}
	for _, c := range cmd.Commands() {
		explainErrors(c, f)
	}
}

// PrintError writes err as kubectl does: API errors as they are ("Error
// from server (Reason): ..."), others after "error: ".
func PrintError(w io.Writer, err error) {
	var lines interface{ KubectlLines() string }
	if errors.As(err, &lines) {
		fmt.Fprint(w, lines.KubectlLines())
		return
	}
	var explained *cli.ExplainedError
	if errors.As(err, &explained) {
		fmt.Fprintln(w, err)
		return
	}
	fmt.Fprintf(w, "error: %v\n", err)
}
