package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"skiff.dev/ctl/pkg/apply"
	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/printers"
)

// ApplyOptions are the flags of skiffctl apply.
type ApplyOptions struct {
	Files             []string
	Recursive         bool
	ServerSide        bool
	ForceConflicts    bool
	FieldManager      string
	DryRun            string
	Output            string
	ShowManagedFields bool
}

// ErrServerSideApplyUnsupported is returned by apply --server-side when
// the server answers 415 to application/apply-patch+yaml.
var ErrServerSideApplyUnsupported = errors.New("this API server does not support server-side apply " +
	"(it answered 415 Unsupported Media Type to application/apply-patch+yaml); " +
	"run apply without --server-side to use client-side apply")

// NewApplyCommand returns skiffctl apply.
func NewApplyCommand(f *cli.Factory) *cobra.Command {
	o := &ApplyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Create or update objects so they match manifests; fields removed from a manifest are removed",
		Long: `Create or update objects so they match manifests.

An object that does not exist is created with the manifest stored in the
kubectl.kubernetes.io/last-applied-configuration annotation. An object that
exists is patched with the three-way merge of that last-applied
configuration, the manifest and the live object: fields the manifest no
longer has are removed, fields others set are kept. The annotation is the
same as kubectl's, so kubectl and skiffctl can take over each other's objects.`,
		Example: `  skiffctl apply -f deployment.yaml
  skiffctl apply -f ./manifests/ -R
  skiffctl apply --server-side -f deployment.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addFileFlags(cmd, &o.Files, &o.Recursive)
	cmd.Flags().BoolVar(&o.ServerSide, "server-side", false, "Let the server apply (needs server support for application/apply-patch+yaml).")
	cmd.Flags().BoolVar(&o.ForceConflicts, "force-conflicts", false, "With --server-side, take over fields owned by other managers.")
	cmd.Flags().StringVar(&o.FieldManager, "field-manager", "kubectl", "The field manager of --server-side.")
	cmd.Flags().StringVar(&o.DryRun, "dry-run", "none", "none, or server: the server validates and answers without storing.")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Print the resulting objects: yaml, json, name or jsonpath=EXPR.")
	cmd.Flags().BoolVar(&o.ShowManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in yaml, json and jsonpath output.")
	return cmd
}

// Run applies every object of the manifests.
func (o *ApplyOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out, errOut io.Writer) error {
	if len(o.Files) == 0 {
		return fmt.Errorf("apply needs -f FILENAME (a file, a directory, or - for standard input)")
	}
	dryRun, err := dryRunOption(o.DryRun)
	if err != nil {
		return err
	}
	printer, err := printers.ParseOutput(o.Output)
	if err != nil {
		return err
	}
	if printer != nil {
		printer.ShowManagedFields = o.ShowManagedFields
	}
	objs, err := readManifests(f, in, o.Files, o.Recursive)
	if err != nil {
		return err
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return err
	}
	var errs []error
	for _, obj := range objs {
		rc := resourceClient(dyn, obj.Mapping, obj.GetNamespace())
		var result string
		var applied *unstructured.Unstructured
		if o.ServerSide {
			result, applied, err = o.serverSide(ctx, rc, obj, dryRun)
			if errors.Is(err, ErrServerSideApplyUnsupported) {
				return err
			}
		} else {
			result, applied, err = clientSide(ctx, rc, obj, dryRun, errOut)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", obj.Where(), cli.Explain(err, f.Server())))
			continue
		}
		if printer != nil {
			if err := printer.Print(out, []*unstructured.Unstructured{applied}, true); err != nil {
				return err
			}
			continue
		}
		if dryRun != nil {
			result += " (server dry run)"
		}
		fmt.Fprintf(out, "%s %s\n", displayName(obj.Mapping, obj.GetName()), result)
	}
	return errors.Join(errs...)
}

// clientSide creates obj with its last-applied configuration, or patches
// the live object with the three-way patch.
func clientSide(ctx context.Context, rc dynamic.ResourceInterface, obj resolved, dryRun []string, errOut io.Writer) (string, *unstructured.Unstructured, error) {
	live, err := rc.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		u, err := apply.WithAnnotation(obj.Unstructured)
		if err != nil {
			return "", nil, err
		}
		created, err := rc.Create(ctx, u, metav1.CreateOptions{FieldManager: apply.FieldManager, FieldValidation: "Strict", DryRun: dryRun})
		return "created", created, err
	}
	if err != nil {
		return "", nil, err
	}
	if apply.Original(live) == nil {
		fmt.Fprintf(errOut, "Warning: %s has no %s annotation (it was not created by apply); "+
			"fields removed from the manifest later cannot be removed from it this time. The annotation is added now.\n",
			displayName(obj.Mapping, obj.GetName()), apply.Annotation)
	}
	patch, err := apply.ThreeWay(obj.Unstructured, live)
	if err != nil {
		return "", nil, err
	}
	if patch.Empty() {
		return "unchanged", live, nil
	}
	patched, err := rc.Patch(ctx, obj.GetName(), patch.Type, patch.Data,
		metav1.PatchOptions{FieldManager: apply.FieldManager, FieldValidation: "Strict", DryRun: dryRun})
	return "configured", patched, err
}

func (o *ApplyOptions) serverSide(ctx context.Context, rc dynamic.ResourceInterface, obj resolved, dryRun []string) (string, *unstructured.Unstructured, error) {
	data, err := obj.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	force := o.ForceConflicts
	applied, err := rc.Patch(ctx, obj.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: o.FieldManager, Force: &force, FieldValidation: "Strict", DryRun: dryRun})
	if isUnsupportedMediaType(err) {
		return "", nil, ErrServerSideApplyUnsupported
	}
	return "serverside-applied", applied, err
}

func isUnsupportedMediaType(err error) bool {
	if err == nil {
		return false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status().Code == 415 || st.Status().Reason == metav1.StatusReasonUnsupportedMediaType
	}
	return false
}
