package app

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/printers"
)

// NewConfigCommand returns skiffctl config and its subcommands.
func NewConfigCommand(flags *cli.ConfigFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config SUBCOMMAND",
		Short: "Show and change kubeconfig files",
		Long: "Show and change kubeconfig files. The file is --kubeconfig, else the files\n" +
			"listed in $KUBECONFIG (merged), else ~/.kube/config.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newConfigViewCommand(flags), newUseContextCommand(flags),
		newCurrentContextCommand(flags), newGetContextsCommand(flags), newSetContextCommand(flags))
	return cmd
}

func newConfigViewCommand(flags *cli.ConfigFlags) *cobra.Command {
	var minify, raw bool
	output := "yaml"
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the merged kubeconfig, with certificate data and secrets left out unless --raw",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadKubeconfig(flags)
			if err != nil {
				return err
			}
			return ViewConfig(cmd.OutOrStdout(), cfg, flags.Context, minify, raw, output)
		},
	}
	cmd.Flags().BoolVar(&minify, "minify", false, "Only the current context, its cluster and its user.")
	cmd.Flags().BoolVar(&raw, "raw", false, "Print certificate data and tokens as they are.")
	cmd.Flags().StringVarP(&output, "output", "o", output, "yaml or json.")
	return cmd
}

func loadKubeconfig(flags *cli.ConfigFlags) (*clientcmdapi.Config, error) {
	cfg, err := flags.LoadingRules().Load()
	if err != nil {
		return nil, cli.ExplainConfigError(err)
	}
	return cfg, nil
}

// ViewConfig writes cfg as kubectl config view does.
func ViewConfig(out io.Writer, cfg *clientcmdapi.Config, context string, minify, raw bool, output string) error {
	if context != "" {
		cfg.CurrentContext = context
	}
	if minify {
		if err := clientcmdapi.MinifyConfig(cfg); err != nil {
			return err
		}
	}
	if !raw {
		clientcmdapi.ShortenConfig(cfg)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	switch output {
	case "yaml", "":
		_, err = out.Write(data)
		return err
	case "json":
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return err
		}
		var v any
		if err := yaml.Unmarshal(j, &v); err != nil {
			return err
		}
		b, err := jsonIndent(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	default:
		return fmt.Errorf("config view -o %s: use yaml or json", output)
	}
}

func newUseContextCommand(flags *cli.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "use-context CONTEXT",
		Short: "Set the current context in the kubeconfig file",
		Args:  exactArgs(1, "use-context needs the name of a context (skiffctl config get-contexts lists them)"),
		ValidArgsFunction: func(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			cfg, err := loadKubeconfig(flags)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return contextNames(cfg), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return UseContext(cmd.OutOrStdout(), flags.LoadingRules(), args[0])
		},
	}
}

// UseContext writes name as the current context of the kubeconfig.
func UseContext(out io.Writer, rules *clientcmd.ClientConfigLoadingRules, name string) error {
	cfg, err := rules.GetStartingConfig()
	if err != nil {
		return cli.ExplainConfigError(err)
	}
	if _, ok := cfg.Contexts[name]; !ok {
		return fmt.Errorf("no context named %q in the kubeconfig; the contexts are: %v", name, contextNames(cfg))
	}
	cfg.CurrentContext = name
	if err := clientcmd.ModifyConfig(rules, *cfg, true); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Switched to context %q.\n", name)
	return err
}

func contextNames(cfg *clientcmdapi.Config) []string {
	names := make([]string, 0, len(cfg.Contexts))
	for n := range cfg.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newCurrentContextCommand(flags *cli.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "current-context",
		Short: "Print the current context",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadKubeconfig(flags)
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				return fmt.Errorf("current-context is not set")
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), cfg.CurrentContext)
			return err
		},
	}
}

func newGetContextsCommand(flags *cli.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get-contexts",
		Short: "List the contexts of the kubeconfig",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadKubeconfig(flags)
			if err != nil {
				return err
			}
			c := printers.NewColumns(cmd.OutOrStdout())
			c.Add("CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE")
			for _, n := range contextNames(cfg) {
				ctx := cfg.Contexts[n]
				cur := ""
				if n == cfg.CurrentContext {
					cur = "*"
				}
				c.Add(cur, n, ctx.Cluster, ctx.AuthInfo, ctx.Namespace)
			}
			return c.Flush()
		},
	}
}

func newSetContextCommand(flags *cli.ConfigFlags) *cobra.Command {
	var current bool
	var ctx clientcmdapi.Context
	cmd := &cobra.Command{
		Use:   "set-context [NAME | --current] [--namespace=NS] [--cluster=C] [--user=U]",
		Short: "Create a context or change its namespace, cluster or user",
		Example: `  skiffctl config set-context --current --namespace=web
  skiffctl config set-context dev --cluster=skiff --user=admin --namespace=dev`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			switch {
			case current && len(args) == 0:
			case !current && len(args) == 1:
				name = args[0]
			default:
				return fmt.Errorf("set-context needs either a context name or --current")
			}
			fs := cmd.Flags()
			return SetContext(cmd.OutOrStdout(), flags.LoadingRules(), name, ctx,
				fs.Changed("namespace"), fs.Changed("cluster"), fs.Changed("user"))
		},
	}
	cmd.Flags().BoolVar(&current, "current", false, "Change the current context.")
	// These shadow the connection flags of the same names on this command.
	cmd.Flags().StringVarP(&ctx.Namespace, "namespace", "n", "", "The context's namespace.")
	cmd.Flags().StringVar(&ctx.Cluster, "cluster", "", "The context's cluster.")
	cmd.Flags().StringVar(&ctx.AuthInfo, "user", "", "The context's user.")
	return cmd
}

// SetContext creates or changes a context; an empty name means the
// current one. Only the fields marked as set are changed.
func SetContext(out io.Writer, rules *clientcmd.ClientConfigLoadingRules, name string, want clientcmdapi.Context, setNS, setCluster, setUser bool) error {
	cfg, err := rules.GetStartingConfig()
	if err != nil {
		return cli.ExplainConfigError(err)
	}
	if name == "" {
		name = cfg.CurrentContext
		if name == "" {
			return fmt.Errorf("--current: the kubeconfig has no current context")
		}
	}
	ctx, exists := cfg.Contexts[name]
	if !exists {
		ctx = clientcmdapi.NewContext()
		cfg.Contexts[name] = ctx
	}
	if setNS {
		ctx.Namespace = want.Namespace
	}
	if setCluster {
		ctx.Cluster = want.Cluster
	}
	if setUser {
		ctx.AuthInfo = want.AuthInfo
	}
	if err := clientcmd.ModifyConfig(rules, *cfg, true); err != nil {
		return err
	}
	verb := "modified"
	if !exists {
		verb = "created"
	}
	_, err = fmt.Fprintf(out, "Context %q %s.\n", name, verb)
	return err
}
