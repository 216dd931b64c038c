package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/trace"
)

// NewTraceCommand returns skiffctl trace.
func NewTraceCommand(f *cli.Factory) *cobra.Command {
	output := ""
	cmd := &cobra.Command{
		Use:   "trace (pod|rs|deployment)/NAME [-o json]",
		Short: "Show a pod's path from the API request to Ready and its Service's endpoints, step by step",
		Long: "skiffctl trace assembles each pod's creation path from what every component recorded\n" +
			"through the API (creationTimestamp, events, conditions, EndpointSlices), ordered by\n" +
			"causality with each machine's clock skew allowed for, with each step's duration and\n" +
			"the slowest marked. A ReplicaSet or Deployment shows all its pods.",
		Example: "  skiffctl trace pod/web-7d4b9-x2x8q\n  skiffctl trace deployment/web -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTrace(cmd.Context(), f, cmd.OutOrStdout(), args[0], output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json, or the timeline when empty.")
	return cmd
}

func runTrace(ctx context.Context, f *cli.Factory, out io.Writer, ref, output string) error {
	if output != "" && output != "json" {
		return fmt.Errorf("--output=%s: use json, or leave it out for the timeline", output)
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	cs, err := f.Clientset()
	if err != nil {
		return err
	}
	ins, err := trace.Collect(ctx, cs, ns, ref)
	if err != nil {
		return err
	}
	if len(ins) == 0 {
		return fmt.Errorf("%s has no pods in namespace %s", ref, ns)
	}
	traces := make([]trace.Trace, 0, len(ins))
	for _, in := range ins {
		traces = append(traces, trace.Build(in))
	}
	if output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if len(traces) == 1 {
			return enc.Encode(traces[0])
		}
		return enc.Encode(traces)
	}
	return trace.Print(out, traces)
}
