package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/manifest"
	"skiff.dev/ctl/pkg/printers"
)

// maxEditRounds bounds how often the editor is reopened after errors.
const maxEditRounds = 5

// NewEditCommand returns skiffctl edit.
func NewEditCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "edit (TYPE NAME | TYPE/NAME)",
		Short: "Edit an object in $KUBE_EDITOR or $EDITOR (vi) and send the changes as a patch",
		Long: "Edit an object in $KUBE_EDITOR, else $EDITOR, else vi. The changes are sent\n" +
			"as a patch; when the server refuses them, the editor opens again with the\n" +
			"reason at the top. Saving the file unchanged cancels.",
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunEdit(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
		ValidArgsFunction: completeResources(f),
	}
	return cmd
}

// editorCommand returns the editor command line from the environment.
func editorCommand() []string {
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return strings.Fields(v)
		}
	}
	return []string{"vi"}
}

// RunEdit edits each object of args in turn.
func RunEdit(ctx context.Context, f *cli.Factory, in io.Reader, out, errOut io.Writer, args []string) error {
	objs, err := selection{}.live(ctx, f, in, args)
	if err != nil {
		return err
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		result, err := editOne(ctx, obj, errOut, func(patchType types.PatchType, patch []byte) error {
			_, err := resourceClient(dyn, obj.mapping, obj.GetNamespace()).Patch(ctx, obj.GetName(), patchType, patch, metav1.PatchOptions{FieldManager: "kubectl-edit"})
			return cli.Explain(err, f.Server())
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", displayName(obj.mapping, obj.GetName()), result)
	}
	return nil
}

// editOne runs the editor until the change is accepted, cancelled, or the
// rounds run out.
func editOne(ctx context.Context, obj liveObject, errOut io.Writer, send func(types.PatchType, []byte) error) (string, error) {
	// As kubectl edit: managedFields are not shown (the patch then leaves
	// them to the server).
	original, err := yaml.Marshal(printers.OmitManagedFields(obj.Unstructured).Object)
	if err != nil {
		return "", err
	}
	header := "# Edit the object below; lines starting with '#' are ignored.\n" +
		"# Save the file unchanged to cancel.\n#\n"
	content := append([]byte(header), original...)
	dir, err := os.MkdirTemp("", "skiffctl-edit-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	file := dir + "/" + strings.ToLower(obj.GetKind()) + "-" + obj.GetName() + ".yaml"
	for round := 0; round < maxEditRounds; round++ {
		if err := os.WriteFile(file, content, 0o600); err != nil {
			return "", err
		}
		if err := runEditor(ctx, file, errOut); err != nil {
			return "", err
		}
		edited, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		body := stripComments(edited)
		if bytes.Equal(bytes.TrimSpace(body), bytes.TrimSpace(stripComments(content))) {
			return "", fmt.Errorf("edit cancelled, no changes made")
		}
		patchType, patch, perr := editPatch(obj, original, body)
		if perr == nil && string(patch) == "{}" {
			return "unchanged", nil
		}
		if perr == nil {
			perr = send(patchType, patch)
		}
		if perr == nil {
			return "edited", nil
		}
		content = append([]byte(header+commentLines("The edit could not be saved:\n"+perr.Error())+"#\n"), body...)
	}
	return "", fmt.Errorf("edit of %s/%s failed %d times; giving up", obj.GetKind(), obj.GetName(), maxEditRounds)
}

func runEditor(ctx context.Context, file string, errOut io.Writer) error {
	argv := append(editorCommand(), file)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, errOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("editor %q: %w", strings.Join(argv[:len(argv)-1], " "), err)
	}
	return nil
}

func stripComments(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

func commentLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("# " + l + "\n")
	}
	return b.String()
}

// editPatch computes the two-way patch from the original to the edited
// YAML: strategic for built-in kinds, JSON merge otherwise.
func editPatch(obj liveObject, original, edited []byte) (types.PatchType, []byte, error) {
	objs, err := manifest.Parse("edited file", edited)
	if err != nil {
		return "", nil, err
	}
	if len(objs) != 1 {
		return "", nil, fmt.Errorf("the edited file must hold exactly one object, not %d", len(objs))
	}
	if objs[0].GetName() != obj.GetName() || objs[0].GetKind() != obj.GetKind() {
		return "", nil, errors.New("kind and metadata.name cannot be changed by edit")
	}
	origJSON, err := yaml.YAMLToJSON(original)
	if err != nil {
		return "", nil, err
	}
	editedJSON, err := runtime.Encode(unstructured.UnstructuredJSONScheme, objs[0].Unstructured)
	if err != nil {
		return "", nil, err
	}
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		p, err := jsonmergepatch.CreateThreeWayJSONMergePatch(origJSON, editedJSON, origJSON)
		return types.MergePatchType, p, err
	}
	p, err := strategicpatch.CreateTwoWayMergePatch(origJSON, editedJSON, typed)
	return types.StrategicMergePatchType, p, err
}
