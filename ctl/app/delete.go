package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/ctl/pkg/cli"
)

// DeleteOptions are the flags of skiffctl delete.
type DeleteOptions struct {
	Files          []string
	Recursive      bool
	Selector       string
	FieldSelector  string
	All            bool
	AllNamespaces  bool
	GracePeriod    int
	Now            bool
	Force          bool
	Wait           bool
	Timeout        time.Duration
	IgnoreNotFound bool
	Cascade        string
}

// NewDeleteCommand returns skiffctl delete.
func NewDeleteCommand(f *cli.Factory) *cobra.Command {
	o := &DeleteOptions{GracePeriod: -1, Wait: true, Cascade: "background"}
	cmd := &cobra.Command{
		Use:   "delete (-f FILENAME | TYPE [NAME...] | TYPE/NAME ... | TYPE -l SELECTOR | TYPE --all)",
		Short: "Delete objects and wait until they are gone",
		Example: `  skiffctl delete pod nginx
  skiffctl delete -f deployment.yaml
  skiffctl delete pods -l app=web --grace-period=0
  skiffctl delete deploy/web --wait=false`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
		ValidArgsFunction: completeResources(f),
	}
	addFileFlags(cmd, &o.Files, &o.Recursive)
	fs := cmd.Flags()
	fs.StringVarP(&o.Selector, "selector", "l", "", "Delete the objects with these labels.")
	fs.StringVar(&o.FieldSelector, "field-selector", "", "Delete the objects whose fields match.")
	fs.BoolVar(&o.All, "all", false, "Delete every object of the type in the namespace.")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "With -l or --all, in every namespace.")
	fs.IntVar(&o.GracePeriod, "grace-period", o.GracePeriod, "Seconds the object has to shut down; -1 uses the object's own, 0 with --force deletes at once.")
	fs.BoolVar(&o.Now, "now", false, "Same as --grace-period=1.")
	fs.BoolVar(&o.Force, "force", false, "With --grace-period=0, delete at once without waiting for the kubelet.")
	fs.BoolVar(&o.Wait, "wait", o.Wait, "Wait until the objects are gone.")
	fs.DurationVar(&o.Timeout, "timeout", cli.DefaultTimeout, "How long to wait for the objects to be gone.")
	fs.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Do not fail on objects that do not exist.")
	fs.StringVar(&o.Cascade, "cascade", o.Cascade, "background, foreground or orphan: what happens to the objects this one owns.")
	return cmd
}

// victim is one object to delete.
type victim struct {
	mapping   *meta.RESTMapping
	namespace string
	name      string
}

func (o *DeleteOptions) deleteOptions() (metav1.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	grace := o.GracePeriod
	if o.Now {
		grace = 1
	}
	if o.Force && grace < 0 {
		grace = 0
	}
	if grace == 0 && !o.Force {
		// As kubectl: a grace period of 0 without --force means 1.
		grace = 1
	}
	if grace >= 0 {
		g := int64(grace)
		opts.GracePeriodSeconds = &g
	}
	var policy metav1.DeletionPropagation
	switch o.Cascade {
	case "background", "true":
		policy = metav1.DeletePropagationBackground
	case "foreground":
		policy = metav1.DeletePropagationForeground
	case "orphan", "false":
		policy = metav1.DeletePropagationOrphan
	default:
		return opts, fmt.Errorf("--cascade=%s: use background, foreground or orphan", o.Cascade)
	}
	opts.PropagationPolicy = &policy
	return opts, nil
}

// Run deletes the objects and waits for them.
func (o *DeleteOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out, errOut io.Writer, args []string) error {
	opts, err := o.deleteOptions()
	if err != nil {
		return err
	}
	victims, err := o.victims(ctx, f, in, args)
	if err != nil {
		return err
	}
	if len(victims) == 0 {
		fmt.Fprintln(errOut, "No resources found")
		return nil
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return err
	}
	var errs []error
	type pending struct {
		victim
		uid string
	}
	var waits []pending
	for _, v := range victims {
		rc := resourceClient(dyn, v.mapping, v.namespace)
		live, err := rc.Get(ctx, v.name, metav1.GetOptions{})
		if err == nil {
			err = rc.Delete(ctx, v.name, opts)
		}
		if err != nil {
			if isNotFound(err) && o.IgnoreNotFound {
				continue
			}
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "%s %q deleted\n", cli.KindName(v.mapping), v.name)
		waits = append(waits, pending{victim: v, uid: string(live.GetUID())})
	}
	if o.Wait {
		for _, p := range waits {
			rc := resourceClient(dyn, p.mapping, p.namespace)
			if err := waitGone(ctx, rc, p.name, p.uid, o.Timeout, errOut, displayName(p.mapping, p.name)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (o *DeleteOptions) victims(ctx context.Context, f *cli.Factory, in io.Reader, args []string) ([]victim, error) {
	if len(o.Files) > 0 {
		if len(args) > 0 {
			return nil, fmt.Errorf("give either -f or resource arguments, not both")
		}
		objs, err := readManifests(f, in, o.Files, o.Recursive)
		if err != nil {
			return nil, err
		}
		out := make([]victim, 0, len(objs))
		for _, obj := range objs {
			out = append(out, victim{mapping: obj.Mapping, namespace: obj.GetNamespace(), name: obj.GetName()})
		}
		return out, nil
	}
	r, err := f.NewResolver()
	if err != nil {
		return nil, err
	}
	targets, err := r.Targets(args)
	if err != nil {
		return nil, err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	if o.AllNamespaces {
		ns = ""
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return nil, err
	}
	var out []victim
	for _, t := range targets {
		if len(t.Names) > 0 {
			for _, n := range t.Names {
				out = append(out, victim{mapping: t.Mapping, namespace: ns, name: n})
			}
			continue
		}
		if o.Selector == "" && o.FieldSelector == "" && !o.All {
			return nil, fmt.Errorf("delete %s: name the objects, or select them with -l, --field-selector or --all", cli.KindName(t.Mapping))
		}
		list, err := resourceClient(dyn, t.Mapping, ns).List(ctx, metav1.ListOptions{LabelSelector: o.Selector, FieldSelector: o.FieldSelector})
		if err != nil {
			return nil, err
		}
		for _, item := range list.Items {
			out = append(out, victim{mapping: t.Mapping, namespace: item.GetNamespace(), name: item.GetName()})
		}
	}
	return out, nil
}
