package app

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/printers"
)

// APIResourcesOptions are the flags of skiffctl api-resources.
type APIResourcesOptions struct {
	Output     string
	APIGroup   string
	Namespaced string
	NoHeaders  bool
}

// NewAPIResourcesCommand returns skiffctl api-resources.
func NewAPIResourcesCommand(f *cli.Factory) *cobra.Command {
	o := &APIResourcesOptions{}
	cmd := &cobra.Command{
		Use:   "api-resources",
		Short: "List the resource types the server serves, with short names and kinds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := f.Discovery()
			if err != nil {
				return err
			}
			// As kubectl: each group's preferred version only (autoscaling
			// lists v2, not also v1).
			lists, err := d.ServerPreferredResources()
			if err != nil && len(lists) == 0 {
				return err
			}
			return o.Print(cmd.OutOrStdout(), lists)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "wide (adds VERBS and CATEGORIES) or name.")
	cmd.Flags().StringVar(&o.APIGroup, "api-group", "", "Only this API group (\"\" is the core group when given as --api-group=).")
	cmd.Flags().StringVar(&o.Namespaced, "namespaced", "", "true or false: only namespaced or only cluster-scoped types.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Leave out the header line.")
	return cmd
}

type apiResource struct {
	metav1.APIResource
	gv schema.GroupVersion
}

// Print writes the resources of lists as kubectl api-resources does.
func (o *APIResourcesOptions) Print(out io.Writer, lists []*metav1.APIResourceList) error {
	var rs []apiResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			if o.APIGroup != "" && gv.Group != o.APIGroup {
				continue
			}
			if o.Namespaced != "" {
				want, err := strconv.ParseBool(o.Namespaced)
				if err != nil {
					return fmt.Errorf("--namespaced=%s: use true or false", o.Namespaced)
				}
				if r.Namespaced != want {
					continue
				}
			}
			rs = append(rs, apiResource{APIResource: r, gv: gv})
		}
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].gv.Group != rs[j].gv.Group {
			return rs[i].gv.Group < rs[j].gv.Group
		}
		return rs[i].Name < rs[j].Name
	})
	if o.Output == "name" {
		for _, r := range rs {
			name := r.Name
			if r.gv.Group != "" {
				name += "." + r.gv.Group
			}
			fmt.Fprintln(out, name)
		}
		return nil
	}
	if o.Output != "" && o.Output != "wide" {
		return fmt.Errorf("api-resources -o %s: use wide or name", o.Output)
	}
	c := printers.NewColumns(out)
	if !o.NoHeaders {
		h := []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}
		if o.Output == "wide" {
			h = append(h, "VERBS", "CATEGORIES")
		}
		c.Add(h...)
	}
	for _, r := range rs {
		row := []string{r.Name, strings.Join(r.ShortNames, ","), r.gv.String(), strconv.FormatBool(r.Namespaced), r.Kind}
		if o.Output == "wide" {
			row = append(row, strings.Join(r.Verbs, ","), strings.Join(r.Categories, ","))
		}
		c.Add(row...)
	}
	return c.Flush()
}
