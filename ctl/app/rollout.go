package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/printers"
	"skiff.dev/ctl/pkg/rollout"
)

// NewRolloutCommand returns skiffctl rollout and its subcommands.
func NewRolloutCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Follow, list, undo and restart the rollouts of Deployments",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRolloutStatusCommand(f), newRolloutHistoryCommand(f), newRolloutUndoCommand(f),
		newRolloutRestartCommand(f), newRolloutPauseCommand(f, true), newRolloutPauseCommand(f, false))
	return cmd
}

// deploymentArg resolves "deploy/web" or "deployment web" to a name.
func deploymentArg(f *cli.Factory, args []string) (string, error) {
	r, err := f.NewResolver()
	if err != nil {
		return "", err
	}
	targets, err := r.Targets(args)
	if err != nil {
		return "", err
	}
	if len(targets) != 1 || len(targets[0].Names) != 1 {
		return "", fmt.Errorf("name exactly one Deployment, e.g. deploy/web")
	}
	gk := targets[0].Mapping.GroupVersionKind.GroupKind()
	if gk.Group != "apps" || gk.Kind != "Deployment" {
		return "", fmt.Errorf("rollout works on Deployments; %s has no rollouts in skiff", cli.KindName(targets[0].Mapping))
	}
	return targets[0].Names[0], nil
}

type rolloutEnv struct {
	cs   kubernetes.Interface
	ns   string
	name string
}

func newRolloutEnv(f *cli.Factory, args []string) (*rolloutEnv, error) {
	name, err := deploymentArg(f, args)
	if err != nil {
		return nil, err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	cs, err := f.Clientset()
	if err != nil {
		return nil, err
	}
	return &rolloutEnv{cs: cs, ns: ns, name: name}, nil
}

func newRolloutStatusCommand(f *cli.Factory) *cobra.Command {
	var timeout time.Duration
	watch := true
	cmd := &cobra.Command{
		Use:   "status (TYPE NAME | TYPE/NAME)",
		Short: "Show a Deployment's rollout as it progresses, until it is done or has failed",
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := newRolloutEnv(f, args)
			if err != nil {
				return err
			}
			return RolloutStatus(cmd.Context(), env.cs, env.ns, env.name, cmd.OutOrStdout(), watch, timeout)
		},
		ValidArgsFunction: completeResources(f),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "Give up after this long (0: wait until done or failed).")
	cmd.Flags().BoolVarP(&watch, "watch", "w", watch, "Follow the rollout; --watch=false prints the state once.")
	return cmd
}

// RolloutStatus prints each new state of the rollout until it is done,
// failed (progress deadline exceeded), or the timeout passed.
func RolloutStatus(ctx context.Context, cs kubernetes.Interface, ns, name string, out io.Writer, follow bool, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	last := ""
	report := func(d *appsv1.Deployment) (bool, error) {
		msg, done, err := rollout.Status(d)
		if err != nil {
			return true, err
		}
		if msg != last {
			last = msg
			if done || !follow {
				fmt.Fprintln(out, msg)
			} else {
				fmt.Fprintf(out, "%s (%s)\n", msg, time.Since(start).Round(time.Second))
			}
		}
		return done || !follow, nil
	}
	client := cs.AppsV1().Deployments(ns)
	for {
		d, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return rolloutCtxErr(ctx, err, timeout, last)
		}
		if stop, err := report(d); stop || err != nil {
			return err
		}
		w, err := client.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: d.ResourceVersion,
		})
		if err != nil {
			return rolloutCtxErr(ctx, err, timeout, last)
		}
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				continue
			}
			if stop, err := report(d); stop || err != nil {
				w.Stop()
				return err
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return rolloutCtxErr(ctx, ctx.Err(), timeout, last)
		}
	}
}

func rolloutCtxErr(ctx context.Context, err error, timeout time.Duration, last string) error {
	if ctx.Err() != nil && timeout > 0 {
		return fmt.Errorf("timed out after %s waiting for the rollout; last state: %s", timeout, last)
	}
	return err
}

func newRolloutHistoryCommand(f *cli.Factory) *cobra.Command {
	var revision int64
	cmd := &cobra.Command{
		Use:   "history (TYPE NAME | TYPE/NAME)",
		Short: "List a Deployment's revisions, or show the pod template of one",
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := newRolloutEnv(f, args)
			if err != nil {
				return err
			}
			d, owned, err := env.deploymentAndReplicaSets(cmd.Context())
			if err != nil {
				return err
			}
			return PrintHistory(cmd.OutOrStdout(), d, owned, revision)
		},
		ValidArgsFunction: completeResources(f),
	}
	cmd.Flags().Int64Var(&revision, "revision", 0, "Show the pod template of this revision.")
	return cmd
}

func (e *rolloutEnv) deploymentAndReplicaSets(ctx context.Context) (*appsv1.Deployment, []*appsv1.ReplicaSet, error) {
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(ctx, e.name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, nil, err
	}
	list, err := e.cs.AppsV1().ReplicaSets(e.ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, nil, err
	}
	return d, rollout.Owned(d, list.Items), nil
}

// PrintHistory writes the revision table, or one revision's template.
func PrintHistory(out io.Writer, d *appsv1.Deployment, owned []*appsv1.ReplicaSet, revision int64) error {
	history := rollout.History(owned)
	if revision > 0 {
		rs, err := rollout.ForRevision(owned, revision)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "deployment.apps/%s with revision #%d\n", d.Name, revision)
		return printTemplate(out, &rs.Spec.Template)
	}
	fmt.Fprintf(out, "deployment.apps/%s \n", d.Name)
	c := printers.NewCompactColumns(out)
	c.Add("REVISION", "CHANGE-CAUSE")
	for _, h := range history {
		cause := h.ChangeCause
		if cause == "" {
			cause = "<none>"
		}
		c.Add(fmt.Sprint(h.Revision), cause)
	}
	if err := c.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return nil
}

func newRolloutUndoCommand(f *cli.Factory) *cobra.Command {
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo (TYPE NAME | TYPE/NAME) [--to-revision=N]",
		Short: "Roll a Deployment back to the previous revision, or to --to-revision",
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := newRolloutEnv(f, args)
			if err != nil {
				return err
			}
			return env.undo(cmd.Context(), cmd.OutOrStdout(), toRevision)
		},
		ValidArgsFunction: completeResources(f),
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to go back to (0: the previous one).")
	return cmd
}

func (e *rolloutEnv) undo(ctx context.Context, out io.Writer, toRevision int64) error {
	d, owned, err := e.deploymentAndReplicaSets(ctx)
	if err != nil {
		return err
	}
	if d.Spec.Paused {
		return fmt.Errorf("you cannot roll back a paused deployment; resume it first with skiffctl rollout resume deployment/%s", d.Name)
	}
	rs, err := rollout.ForRevision(owned, toRevision)
	if err != nil {
		return fmt.Errorf("deployment/%s: %w", d.Name, err)
	}
	if rollout.EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
		fmt.Fprintf(out, "deployment.apps/%s skipped rollback (current template already matches revision %d)\n", d.Name, rollout.Revision(rs))
		return nil
	}
	patch, err := rollout.UndoPatch(d, rs)
	if err != nil {
		return err
	}
	if _, err := e.cs.AppsV1().Deployments(e.ns).Patch(ctx, d.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("failed restoring revision %d: %w", rollout.Revision(rs), err)
	}
	fmt.Fprintf(out, "deployment.apps/%s rolled back\n", d.Name)
	return nil
}

func newRolloutRestartCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "restart (TYPE NAME | TYPE/NAME)",
		Short: "Replace a Deployment's pods by stamping its pod template with the time",
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := newRolloutEnv(f, args)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			d, err := env.cs.AppsV1().Deployments(env.ns).Get(ctx, env.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Spec.Paused {
				return fmt.Errorf("can't restart paused deployment (run rollout resume first)")
			}
			if _, err := env.cs.AppsV1().Deployments(env.ns).Patch(ctx, env.name, types.StrategicMergePatchType,
				rollout.RestartPatch(time.Now()), metav1.PatchOptions{FieldManager: "kubectl-rollout"}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deployment.apps/%s restarted\n", env.name)
			return nil
		},
		ValidArgsFunction: completeResources(f),
	}
}

func newRolloutPauseCommand(f *cli.Factory, pause bool) *cobra.Command {
	verb, past := "resume", "resumed"
	if pause {
		verb, past = "pause", "paused"
	}
	return &cobra.Command{
		Use:   verb + " (TYPE NAME | TYPE/NAME)",
		Short: fmt.Sprintf("Mark a Deployment as %s", past),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := newRolloutEnv(f, args)
			if err != nil {
				return err
			}
			patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, pause)
			if _, err := env.cs.AppsV1().Deployments(env.ns).Patch(cmd.Context(), env.name, types.StrategicMergePatchType,
				[]byte(patch), metav1.PatchOptions{FieldManager: "kubectl-rollout"}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deployment.apps/%s %s\n", env.name, past)
			return nil
		},
		ValidArgsFunction: completeResources(f),
	}
}

func printTemplate(out io.Writer, t *corev1.PodTemplateSpec) error {
	b, err := yaml.Marshal(t)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "Pod Template:")
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		fmt.Fprintf(out, "  %s\n", line)
	}
	return nil
}
