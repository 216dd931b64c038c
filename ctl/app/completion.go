package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/ctl/pkg/cli"
)

// NewCompletionCommand returns skiffctl completion.
func NewCompletionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh",
		Short: "Print the shell completion script for bash or zsh",
		Long: `Print the shell completion script.

  bash:  source <(skiffctl completion bash)
  zsh:   source <(skiffctl completion zsh)

Completion knows the verbs and flags, the resource types of the server and
the names of objects.`,
		ValidArgs: []string{"bash", "zsh"},
		Args:      exactArgs(1, "completion needs the shell: bash or zsh"),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(cmd.OutOrStdout(), true)
			case "zsh":
				return root.GenZshCompletion(cmd.OutOrStdout())
			}
			return fmt.Errorf("completion %q: use bash or zsh", args[0])
		},
	}
}

// completeResources completes resource types for the first argument and
// object names after it.
func completeResources(f *cli.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return resourceTypeNames(f, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		if strings.Contains(args[0], "/") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return objectNames(cmd.Context(), f, args[0], toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func resourceTypeNames(f *cli.Factory, prefix string) []string {
	d, err := f.Discovery()
	if err != nil {
		return nil
	}
	_, lists, _ := d.ServerGroupsAndResources()
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") && strings.HasPrefix(r.Name, prefix) {
				out = append(out, r.Name)
			}
		}
	}
	return out
}

func objectNames(ctx context.Context, f *cli.Factory, typ, prefix string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	r, err := f.NewResolver()
	if err != nil {
		return nil
	}
	m, err := r.Mapping(typ)
	if err != nil {
		return nil
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return nil
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil
	}
	list, err := resourceClient(dyn, m, ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, item := range list.Items {
		if strings.HasPrefix(item.GetName(), prefix) {
			out = append(out, item.GetName())
		}
	}
	return out
}
