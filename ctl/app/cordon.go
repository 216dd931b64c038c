package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/drain"
)

// nodeFlags are the flags cordon, uncordon and drain share.
type nodeFlags struct {
	Selector string
	DryRun   string
}

func (n *nodeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&n.Selector, "selector", "l", "", "Act on the nodes with these labels instead of named ones.")
	cmd.Flags().StringVar(&n.DryRun, "dry-run", "none", `"none", "server" or "client": client only prints what would be done; server sends it for the server to check and not store.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = drain.DryRunNoValue
}

// dryRun reads --dry-run; a bare --dry-run is refused as kubectl does.
func (n *nodeFlags) dryRun() (drain.DryRun, error) { return drain.ParseDryRun(n.DryRun) }

// nodes resolves NODE arguments (NAME, node/NAME, nodes/NAME) or -l.
func (n *nodeFlags) nodes(ctx context.Context, c kubernetes.Interface, use string, args []string) ([]corev1.Node, error) {
	if len(args) > 0 && n.Selector != "" {
		return nil, fmt.Errorf("cannot specify both a node name and a --selector option")
	}
	if len(args) == 0 && n.Selector == "" {
		return nil, fmt.Errorf("USAGE: %s [flags]", use)
	}
	if n.Selector != "" {
		if _, err := labels.Parse(n.Selector); err != nil {
			return nil, err
		}
		l, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: n.Selector})
		if err != nil {
			return nil, err
		}
		if len(l.Items) == 0 {
			return nil, fmt.Errorf("no nodes found with labels %q", n.Selector)
		}
		return l.Items, nil
	}
	var out []corev1.Node
	for _, a := range args {
		name := a
		if typ, rest, ok := strings.Cut(a, "/"); ok {
			if typ != "node" && typ != "nodes" && typ != "no" {
				return nil, fmt.Errorf("expected resource of type node, got %q", typ)
			}
			name = rest
		}
		node, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, *node)
	}
	return out, nil
}

// cordonNodes sets each node's spec.unschedulable to desired and prints
// kubectl's "node/NAME cordoned" or "already cordoned"; a node that
// cannot be changed is reported and the others go on.
func cordonNodes(ctx context.Context, c kubernetes.Interface, nodes []corev1.Node, desired bool, dryRun drain.DryRun, out, errOut io.Writer) error {
	verb := "cordon"
	if !desired {
		verb = "uncordon"
	}
	var errs []error
	for i := range nodes {
		changed, err := drain.Cordon(ctx, c, &nodes[i], desired, dryRun)
		if err != nil {
			fmt.Fprintf(errOut, "error: unable to %s node %q: %v\n", verb, nodes[i].Name, err)
			errs = append(errs, err)
			continue
		}
		state := verb + "ed"
		if !changed {
			state = "already " + state
		}
		fmt.Fprintf(out, "node/%s %s%s\n", nodes[i].Name, state, dryRun.Suffix())
	}
	return errors.Join(errs...)
}

// NewCordonCommand returns skiffctl cordon.
func NewCordonCommand(f *cli.Factory) *cobra.Command { return newCordonCommand(f, true) }

// NewUncordonCommand returns skiffctl uncordon.
func NewUncordonCommand(f *cli.Factory) *cobra.Command { return newCordonCommand(f, false) }

func newCordonCommand(f *cli.Factory, desired bool) *cobra.Command {
	n := &nodeFlags{}
	use, short, example := "cordon NODE", "Mark a node unschedulable", "  skiffctl cordon node-1\n  skiffctl cordon -l pool=blue --dry-run=server"
	if !desired {
		use, short, example = "uncordon NODE", "Mark a node schedulable", "  skiffctl uncordon node-1"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			dry, err := n.dryRun()
			if err != nil {
				return err
			}
			c, err := f.Clientset()
			if err != nil {
				return err
			}
			nodes, err := n.nodes(cmd.Context(), c, cmd.Use, args)
			if err != nil {
				return err
			}
			// As kubectl: a node that cannot be changed is reported on
			// stderr and the command still succeeds.
			_ = cordonNodes(cmd.Context(), c, nodes, desired, dry, cmd.OutOrStdout(), cmd.ErrOrStderr())
			return nil
		},
		ValidArgsFunction: completeNodes(f),
	}
	n.add(cmd)
	return cmd
}

// completeNodes completes node names.
func completeNodes(f *cli.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return objectNames(c.Context(), f, "nodes", prefix), cobra.ShellCompDirectiveNoFileComp
	}
}
