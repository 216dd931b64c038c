package app

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"

	"skiff.dev/ctl/pkg/cli"
)

// NewVersionCommand returns skiffctl version.
func NewVersionCommand(f *cli.Factory) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return RunVersion(cmd.Context(), f, cmd.OutOrStdout(), clientOnly, output)
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Only the client version; do not contact the server.")
	cmd.Flags().StringVarP(&output, "output", "o", "", "yaml or json.")
	return cmd
}

// versionInfo is what -o yaml|json prints, in kubectl's field names.
type versionInfo struct {
	ClientVersion *version.Info `json:"clientVersion"`
	ServerVersion *version.Info `json:"serverVersion,omitempty"`
}

// RunVersion prints the versions.
func RunVersion(_ context.Context, f *cli.Factory, out io.Writer, clientOnly bool, output string) error {
	info := versionInfo{ClientVersion: &version.Info{
		GitVersion: cli.Version, GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}}
	var serverErr error
	if !clientOnly {
		d, err := f.Discovery()
		if err == nil {
			info.ServerVersion, serverErr = d.ServerVersion()
		} else {
			serverErr = err
		}
	}
	switch output {
	case "":
		fmt.Fprintf(out, "Client Version: %s\n", info.ClientVersion.GitVersion)
		if info.ServerVersion != nil {
			fmt.Fprintf(out, "Server Version: %s\n", info.ServerVersion.GitVersion)
		}
	case "json":
		b, err := jsonIndent(info)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
	case "yaml":
		b, err := yaml.Marshal(info)
		if err != nil {
			return err
		}
		out.Write(b)
	default:
		return fmt.Errorf("version -o %s: use yaml or json", output)
	}
	return serverErr
}
