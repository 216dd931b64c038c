package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"skiff.dev/ctl/pkg/apply"
	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/printers"
)

// CreateOptions are the flags of skiffctl create.
type CreateOptions struct {
	Files             []string
	Recursive         bool
	SaveConfig        bool
	DryRun            string
	Output            string
	ShowManagedFields bool
}

// NewCreateCommand returns skiffctl create.
func NewCreateCommand(f *cli.Factory) *cobra.Command {
	o := &CreateOptions{}
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create the objects of manifests; fail for those that exist",
		Example: `  skiffctl create -f replicaset.yaml
  skiffctl create -f ./manifests/ -v 10
  cat pod.yaml | skiffctl create -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	addFileFlags(cmd, &o.Files, &o.Recursive)
	cmd.AddCommand(newCreateNamespaceCommand(f))
	cmd.Flags().BoolVar(&o.SaveConfig, "save-config", false, "Store the manifest as the last-applied configuration, so that apply can take over.")
	cmd.Flags().StringVar(&o.DryRun, "dry-run", "none", "none, or server: the server validates and answers without storing.")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Print the created objects: yaml, json, name or jsonpath=EXPR.")
	cmd.Flags().BoolVar(&o.ShowManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in yaml, json and jsonpath output.")
	return cmd
}

func addFileFlags(cmd *cobra.Command, files *[]string, recursive *bool) {
	cmd.Flags().StringSliceVarP(files, "filename", "f", nil, "A manifest file, a directory of them, or - for standard input (repeatable).")
	cmd.Flags().BoolVarP(recursive, "recursive", "R", false, "Read directories given with -f recursively.")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

func dryRunOption(v string) ([]string, error) {
	switch v {
	case "", "none":
		return nil, nil
	case "server":
		return []string{metav1.DryRunAll}, nil
	default:
		return nil, fmt.Errorf("--dry-run=%s: use none or server", v)
	}
}

// Run creates every object of the manifests.
func (o *CreateOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out io.Writer) error {
	if len(o.Files) == 0 {
		return fmt.Errorf("create needs -f FILENAME (a file, a directory, or - for standard input)")
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
		u := obj.Unstructured
		if o.SaveConfig {
			if u, err = apply.WithAnnotation(u); err != nil {
				return err
			}
		}
		created, err := resourceClient(dyn, obj.Mapping, obj.GetNamespace()).Create(ctx, u,
			metav1.CreateOptions{FieldManager: "kubectl-create", FieldValidation: "Strict", DryRun: dryRun})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", obj.Where(), cli.Explain(err, f.Server())))
			continue
		}
		if printer != nil {
			if err := printer.Print(out, []*unstructured.Unstructured{created}, true); err != nil {
				return err
			}
			continue
		}
		suffix := ""
		if dryRun != nil {
			suffix = " (server dry run)"
		}
		fmt.Fprintf(out, "%s created%s\n", displayName(obj.Mapping, created.GetName()), suffix)
	}
	return errors.Join(errs...)
}

func newCreateNamespaceCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "namespace NAME",
		Aliases: []string{"ns"},
		Short:   "Create a namespace",
		Args:    exactArgs(1, "create namespace needs the name of the namespace"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := f.Clientset()
			if err != nil {
				return err
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: args[0]}}
			if _, err := cs.CoreV1().Namespaces().Create(cmd.Context(), ns, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "namespace/%s created\n", args[0])
			return nil
		},
	}
}
