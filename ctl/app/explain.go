package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/explain"
)

// NewExplainCommand returns skiffctl explain.
func NewExplainCommand(f *cli.Factory) *cobra.Command {
	var recursive bool
	var apiVersion string
	cmd := &cobra.Command{
		Use:   "explain TYPE[.FIELD...]",
		Short: "Document a kind or one of its fields from the server's OpenAPI v3 documents",
		Example: `  skiffctl explain deployment
  skiffctl explain pod.spec.containers.ports
  skiffctl explain rs.spec --recursive`,
		Args: exactArgs(1, "explain needs one argument: TYPE or TYPE.FIELD.PATH, e.g. pod.spec.containers"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunExplain(cmd.Context(), f, cmd.OutOrStdout(), args[0], apiVersion, recursive)
		},
	}
	cmd.Flags().BoolVar(&recursive, "recursive", false, "Print every nested field.")
	cmd.Flags().StringVar(&apiVersion, "api-version", "", "The group/version to explain, when the kind exists in several.")
	return cmd
}

// RunExplain prints the explanation of arg.
func RunExplain(ctx context.Context, f *cli.Factory, out io.Writer, arg, apiVersion string, recursive bool) error {
	parts := strings.Split(arg, ".")
	r, err := f.NewResolver()
	if err != nil {
		return err
	}
	// The resource may be group-qualified (deployments.apps.spec): take the
	// longest prefix that resolves.
	n := 1
	m, err := r.Mapping(parts[0])
	for i := len(parts); i > 1; i-- {
		if mm, e := r.Mapping(strings.Join(parts[:i], ".")); e == nil {
			m, err, n = mm, nil, i
			break
		}
	}
	if err != nil {
		return err
	}
	gvk := m.GroupVersionKind
	if apiVersion != "" {
		gv, perr := parseGroupVersion(apiVersion)
		if perr != nil {
			return perr
		}
		gvk.Group, gvk.Version = gv.Group, gv.Version
	}
	rc, err := f.RawClient()
	if err != nil {
		return err
	}
	indexData, err := rc.Get().AbsPath("/openapi/v3").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("reading /openapi/v3: %w", err)
	}
	var index explain.Index
	if err := json.Unmarshal(indexData, &index); err != nil {
		return fmt.Errorf("decoding /openapi/v3: %w", err)
	}
	entry, ok := index.Paths[explain.DocumentPath(gvk.GroupVersion())]
	if !ok {
		return fmt.Errorf("the server publishes no OpenAPI v3 document for %s", gvk.GroupVersion())
	}
	docData, err := rc.Get().AbsPath(strings.SplitN(entry.ServerRelativeURL, "?", 2)[0]).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("reading %s: %w", entry.ServerRelativeURL, err)
	}
	doc, err := explain.ParseDocument(docData)
	if err != nil {
		return err
	}
	return explain.Print(out, doc, explain.Options{GVK: gvk, Path: parts[n:], Recursive: recursive})
}
