package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/drain"
)

// NewDrainCommand returns skiffctl drain.
func NewDrainCommand(f *cli.Factory) *cobra.Command {
	n := &nodeFlags{}
	h := &drain.Helper{GracePeriodSeconds: -1, ChunkSize: 500}
	cmd := &cobra.Command{
		Use:   "drain NODE",
		Short: "Cordon a node and evict its pods, respecting PodDisruptionBudgets",
		Long: "drain cordons the node, then evicts its pods through pods/eviction, so\n" +
			"each PodDisruptionBudget holds: an eviction the budget refuses (429) is\n" +
			"retried every 5s until --timeout. DaemonSet-managed pods are refused unless\n" +
			"--ignore-daemonsets leaves them; pods no controller would recreate need\n" +
			"--force, pods with emptyDir volumes --delete-emptydir-data. Mirror pods are\n" +
			"left to their kubelet. drain returns once every evicted pod is gone.",
		Example: `  skiffctl drain node-1 --ignore-daemonsets
  skiffctl drain node-1 --ignore-daemonsets --force --delete-emptydir-data --timeout=2m
  skiffctl drain node-1 --pod-selector=app=web --dry-run=client`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDrain(cmd.Context(), f, n, h, cmd.Use, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
		ValidArgsFunction: completeNodes(f),
	}
	n.add(cmd)
	fs := cmd.Flags()
	fs.BoolVar(&h.Force, "force", false, "Continue even if there are pods that do not declare a controller.")
	fs.BoolVar(&h.IgnoreAllDaemonSets, "ignore-daemonsets", false, "Ignore DaemonSet-managed pods.")
	fs.BoolVar(&h.DeleteEmptyDirData, "delete-emptydir-data", false, "Continue even if there are pods using emptyDir (local data that will be deleted when the node is drained).")
	fs.IntVar(&h.GracePeriodSeconds, "grace-period", -1, "Period of time in seconds given to each pod to terminate gracefully. If negative, the default value specified in the pod will be used.")
	fs.DurationVar(&h.Timeout, "timeout", 0, "The length of time to wait before giving up, zero means infinite.")
	fs.StringVar(&h.PodSelector, "pod-selector", "", "Label selector to filter pods on the node.")
	fs.BoolVar(&h.DisableEviction, "disable-eviction", false, "Force drain to use delete, even if eviction is supported. This will bypass checking PodDisruptionBudgets, use with caution.")
	fs.IntVar(&h.SkipWaitForDeleteTimeoutSeconds, "skip-wait-for-delete-timeout", 0, "If pod DeletionTimestamp older than N seconds, skip waiting for the pod. Seconds must be greater than 0 to skip.")
	fs.Int64Var(&h.ChunkSize, "chunk-size", 500, "Return large lists in chunks rather than all at once. Pass 0 to disable.")
	return cmd
}

// runDrain is kubectl's RunDrain: cordon every node, then drain each,
// going on to the next when one fails and listing those left.
func runDrain(ctx context.Context, f *cli.Factory, n *nodeFlags, h *drain.Helper, use string, args []string, out, errOut io.Writer) error {
	dry, err := n.dryRun()
	if err != nil {
		return err
	}
	h.DryRun = dry
	if h.PodSelector != "" {
		if _, err := labels.Parse(h.PodSelector); err != nil {
			return fmt.Errorf("--pod-selector=<pod_selector> must be a valid label selector")
		}
	}
	c, err := f.Clientset()
	if err != nil {
		return err
	}
	h.Client, h.Out, h.ErrOut = c, out, errOut
	nodes, err := n.nodes(ctx, c, use, args)
	if err != nil {
		return err
	}
	_ = cordonNodes(ctx, c, nodes, true, dry, out, errOut)
	var fatal []error
	var remaining []string
	for _, node := range nodes {
		if err := drainNode(ctx, h, node.Name, out, errOut); err != nil {
			fmt.Fprintf(errOut, "error: unable to drain node %q due to error: %s, continuing command...\n", node.Name, err)
			fatal = append(fatal, err)
			remaining = append(remaining, node.Name)
			continue
		}
		fmt.Fprintf(out, "node/%s drained%s\n", node.Name, dry.Suffix())
	}
	if len(remaining) > 0 {
		fmt.Fprintf(errOut, "There are pending nodes to be drained:\n")
		for _, name := range remaining {
			fmt.Fprintf(errOut, " %s\n", name)
		}
	}
	return kubectlErrors(fatal)
}

// linesError is how kubectl prints an aggregate of errors when it exits:
// each on a line of its own, without "error: ".
type linesError []error

func (e linesError) Error() string { return strings.TrimSuffix(e.KubectlLines(), "\n") }

// KubectlLines is the text PrintError writes.
func (e linesError) KubectlLines() string {
	var b strings.Builder
	for _, err := range e {
		b.WriteString(err.Error() + "\n")
	}
	return b.String()
}

func (e linesError) Unwrap() []error { return e }

// kubectlErrors is what kubectl's drain exits with for the errors of the
// nodes it could not drain: one node's aggregate is printed one error a
// line, several nodes' one node a line.
func kubectlErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		var inner interface{ Unwrap() []error }
		if errors.As(errs[0], &inner) {
			return linesError(inner.Unwrap())
		}
		return errs[0]
	}
	return linesError(errs)
}

// drainNode evicts or deletes the node's pods the filters let go.
func drainNode(ctx context.Context, h *drain.Helper, node string, out, errOut io.Writer) error {
	list, errs := h.PodsForDeletion(ctx, node)
	if errs != nil {
		return aggregate(errs)
	}
	if w := list.Warnings(); w != "" {
		fmt.Fprintf(errOut, "Warning: %s\n", w)
	}
	if h.DryRun == drain.DryRunClient {
		for _, p := range list.Pods() {
			fmt.Fprintf(out, "evicting pod %s/%s (dry run)\n", p.Namespace, p.Name)
		}
		return nil
	}
	var mu sync.Mutex
	done := func(p *corev1.Pod, evicted bool) {
		verb := "deleted"
		if evicted {
			verb = "evicted"
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "pod/%s %s%s\n", p.Name, verb, h.DryRun.Suffix())
	}
	err := h.DeleteOrEvict(ctx, list.Pods(), done)
	if err == nil {
		return nil
	}
	pending, newErrs := h.PodsForDeletion(ctx, node)
	if pending != nil {
		if pods := pending.Pods(); len(pods) > 0 {
			fmt.Fprintf(errOut, "There are pending pods in node %q when an error occurred: %v\n", node, err)
			for _, p := range pods {
				fmt.Fprintf(errOut, "pod/%s\n", p.Name)
			}
		}
	}
	if newErrs != nil {
		fmt.Fprintf(errOut, "Following errors occurred while getting the list of pods to delete:\n%s", aggregate(newErrs))
	}
	return err
}

func aggregate(errs []error) error { return drain.Aggregate(errs) }
