package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/ctl/pkg/cli"
)

// ScaleOptions are the flags of skiffctl scale.
type ScaleOptions struct {
	Replicas        int
	CurrentReplicas int
	Selector        string
	All             bool
	Files           []string
	Recursive       bool
}

// NewScaleCommand returns skiffctl scale.
func NewScaleCommand(f *cli.Factory) *cobra.Command {
	o := &ScaleOptions{Replicas: -1, CurrentReplicas: -1}
	cmd := &cobra.Command{
		Use:   "scale --replicas=COUNT (TYPE NAME | TYPE/NAME | -f FILE)",
		Short: "Set the replica count of Deployments, ReplicaSets and other scalable kinds",
		Example: `  skiffctl scale deploy/web --replicas=3
  skiffctl scale rs web-7d9 --replicas=0 --current-replicas=2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), args)
		},
		ValidArgsFunction: completeResources(f),
	}
	fs := cmd.Flags()
	fs.IntVar(&o.Replicas, "replicas", o.Replicas, "The new replica count (required).")
	fs.IntVar(&o.CurrentReplicas, "current-replicas", o.CurrentReplicas, "Only scale when the current count is this (a precondition).")
	fs.StringVarP(&o.Selector, "selector", "l", "", "Scale the objects with these labels.")
	fs.BoolVar(&o.All, "all", false, "Scale every object of the type in the namespace.")
	addFileFlags(cmd, &o.Files, &o.Recursive)
	return cmd
}

// Run scales each object through its scale subresource.
func (o *ScaleOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out io.Writer, args []string) error {
	if o.Replicas < 0 {
		return fmt.Errorf("scale needs --replicas=COUNT with COUNT >= 0")
	}
	objs, err := selection{Files: o.Files, Recursive: o.Recursive, Selector: o.Selector, All: o.All}.live(ctx, f, in, args)
	if err != nil && len(objs) == 0 {
		return err
	}
	errs := []error{err}
	dyn, derr := f.Dynamic()
	if derr != nil {
		return derr
	}
	for _, obj := range objs {
		rc := resourceClient(dyn, obj.mapping, obj.GetNamespace())
		scale, err := rc.Get(ctx, obj.GetName(), metav1.GetOptions{}, "scale")
		if err != nil {
			if isNotFound(err) {
				err = fmt.Errorf("%s cannot be scaled: the server has no scale subresource for it", displayName(obj.mapping, obj.GetName()))
			}
			errs = append(errs, err)
			continue
		}
		if o.CurrentReplicas >= 0 {
			cur, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
			if int(cur) != o.CurrentReplicas {
				errs = append(errs, fmt.Errorf("%s has %d replicas, not --current-replicas=%d; not scaled",
					displayName(obj.mapping, obj.GetName()), cur, o.CurrentReplicas))
				continue
			}
		}
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.Replicas)
		if _, err := rc.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "scale"); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "%s scaled\n", displayName(obj.mapping, obj.GetName()))
	}
	return errors.Join(errs...)
}
