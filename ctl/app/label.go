package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"skiff.dev/ctl/pkg/cli"
)

// metaKind says whether a command changes labels or annotations.
type metaKind struct {
	verb, field, past string
}

var (
	labelKind      = metaKind{verb: "label", field: "labels", past: "labeled"}
	annotationKind = metaKind{verb: "annotate", field: "annotations", past: "annotated"}
)

// LabelOptions are the flags of skiffctl label and annotate.
type LabelOptions struct {
	kind          metaKind
	Overwrite     bool
	List          bool
	Selector      string
	All           bool
	AllNamespaces bool
	Files         []string
	Recursive     bool
}

// NewLabelCommand returns skiffctl label.
func NewLabelCommand(f *cli.Factory) *cobra.Command { return newMetaCommand(f, labelKind) }

// NewAnnotateCommand returns skiffctl annotate.
func NewAnnotateCommand(f *cli.Factory) *cobra.Command { return newMetaCommand(f, annotationKind) }

// newMetaCommand returns skiffctl label or skiffctl annotate.
func newMetaCommand(f *cli.Factory, kind metaKind) *cobra.Command {
	o := &LabelOptions{kind: kind}
	cmd := &cobra.Command{
		Use:   kind.verb + " (TYPE NAME... | TYPE/NAME... | -f FILE | TYPE -l SELECTOR) KEY=VALUE... KEY-...",
		Short: fmt.Sprintf("Add, change (with --overwrite) or remove (KEY-) %s", kind.field),
		Example: fmt.Sprintf(`  skiffctl %[1]s pod nginx tier=web
  skiffctl %[1]s pod nginx tier=db --overwrite
  skiffctl %[1]s pod nginx tier-
  skiffctl %[1]s pods -l app=web tier=web`, kind.verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), args)
		},
		ValidArgsFunction: completeResources(f),
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.Overwrite, "overwrite", false, "Allow changing the value of a key that is already set.")
	fs.BoolVar(&o.List, "list", false, "Print the "+kind.field+" of the objects instead of changing them.")
	fs.StringVarP(&o.Selector, "selector", "l", "", "Change the objects with these labels.")
	fs.BoolVar(&o.All, "all", false, "Change every object of the type in the namespace.")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "With -l or --all, in every namespace.")
	addFileFlags(cmd, &o.Files, &o.Recursive)
	return cmd
}

// change is one KEY=VALUE (set) or KEY- (remove).
type change struct {
	key, value string
	remove     bool
}

// splitLabelArgs separates the resource arguments from the changes.
func splitLabelArgs(args []string, kind metaKind) (resources []string, changes []change, err error) {
	for _, a := range args {
		switch {
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			if err := validateKey(k, kind); err != nil {
				return nil, nil, err
			}
			if kind == labelKind {
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					return nil, nil, fmt.Errorf("invalid label value %q: %s", v, strings.Join(errs, "; "))
				}
			}
			changes = append(changes, change{key: k, value: v})
		case strings.HasSuffix(a, "-") && len(resources) > 0:
			k := strings.TrimSuffix(a, "-")
			if err := validateKey(k, kind); err != nil {
				return nil, nil, err
			}
			changes = append(changes, change{key: k, remove: true})
		default:
			if len(changes) > 0 {
				return nil, nil, fmt.Errorf("%q: give the objects first, then the %s changes", a, kind.field)
			}
			resources = append(resources, a)
		}
	}
	return resources, changes, nil
}

func validateKey(k string, kind metaKind) error {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return fmt.Errorf("invalid %s key %q: %s", strings.TrimSuffix(kind.field, "s"), k, strings.Join(errs, "; "))
	}
	return nil
}

// Run applies the changes to each object.
func (o *LabelOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out io.Writer, args []string) error {
	resources, changes, err := splitLabelArgs(args, o.kind)
	if err != nil {
		return err
	}
	if len(changes) == 0 && !o.List {
		return fmt.Errorf("%s: give at least one KEY=VALUE or KEY- (or --list)", o.kind.verb)
	}
	objs, err := o.objects(ctx, f, in, resources)
	if err != nil {
		return err
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return err
	}
	var errs []error
	for _, obj := range objs {
		current := obj.current()
		if o.List {
			keys := make([]string, 0, len(current))
			for k := range current {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(out, "%s=%s\n", k, current[k])
			}
			continue
		}
		patch, err := o.patch(current, changes)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", displayName(obj.mapping, obj.GetName()), err))
			continue
		}
		rc := resourceClient(dyn, obj.mapping, obj.GetNamespace())
		if _, err := rc.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "%s %s\n", displayName(obj.mapping, obj.GetName()), o.kind.past)
	}
	return errors.Join(errs...)
}

// patch builds the merge patch, refusing to change a value without
// --overwrite as kubectl does.
func (o *LabelOptions) patch(current map[string]string, changes []change) ([]byte, error) {
	set := map[string]any{}
	for _, c := range changes {
		if c.remove {
			set[c.key] = nil
			continue
		}
		if old, ok := current[c.key]; ok && old != c.value && !o.Overwrite {
			return nil, fmt.Errorf("%q already has the value %q; pass --overwrite to change it", c.key, old)
		}
		set[c.key] = c.value
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{o.kind.field: set}})
}

func (o *LabelOptions) objects(ctx context.Context, f *cli.Factory, in io.Reader, resources []string) ([]liveObject, error) {
	sel := selection{Files: o.Files, Recursive: o.Recursive, Selector: o.Selector, All: o.All, AllNamespaces: o.AllNamespaces}
	objs, err := sel.live(ctx, f, in, resources)
	for i := range objs {
		objs[i].field = o.kind.field
	}
	return objs, err
}
