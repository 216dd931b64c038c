package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/printers"
)

// GetOptions are the flags of skiffctl get.
type GetOptions struct {
	Output            string
	ShowManagedFields bool
	Selector          string
	FieldSelector     string
	AllNamespaces     bool
	Watch             bool
	WatchOnly         bool
	ShowLabels        bool
	LabelColumns      []string
	NoHeaders         bool
	IgnoreNotFound    bool
	ShowKind          bool
	SortBy            string
	Files             []string
	Recursive         bool
	Raw               string

	sortKey *printers.SortKey
}

// NewGetCommand returns skiffctl get.
func NewGetCommand(f *cli.Factory) *cobra.Command {
	o := &GetOptions{}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME ... | all",
		Short: "List objects in kubectl's columns, or print them as YAML, JSON, names or JSONPath",
		Example: `  skiffctl get pods
  skiffctl get deploy,rs -o wide
  skiffctl get pod/nginx -o yaml
  skiffctl get pods -A -l app=web --field-selector status.phase=Running
  skiffctl get pods -w
  skiffctl get all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
		ValidArgsFunction: completeResources(f),
	}
	addFileFlags(cmd, &o.Files, &o.Recursive)
	fs := cmd.Flags()
	fs.StringVarP(&o.Output, "output", "o", "", "Output format: wide, yaml, json, name, jsonpath=EXPR.")
	fs.BoolVar(&o.ShowManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in yaml, json and jsonpath output.")
	fs.StringVarP(&o.Selector, "selector", "l", "", "Label selector, e.g. -l app=web,tier!=db.")
	fs.StringVar(&o.FieldSelector, "field-selector", "", "Field selector, e.g. --field-selector status.phase=Running.")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List across all namespaces.")
	fs.BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes.")
	fs.BoolVar(&o.WatchOnly, "watch-only", false, "Watch for changes without listing first.")
	fs.BoolVar(&o.ShowLabels, "show-labels", false, "Show all labels as the last column.")
	fs.StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "Labels to show as columns.")
	fs.BoolVar(&o.NoHeaders, "no-headers", false, "Leave out the header line.")
	fs.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Do not fail on objects that do not exist.")
	fs.BoolVar(&o.ShowKind, "show-kind", false, "Print kind/name even for one kind.")
	fs.StringVar(&o.Raw, "raw", "", "GET this URL path from the server and print the answer as it is (e.g. /readyz, /api/v1/pods).")
	fs.StringVar(&o.SortBy, "sort-by", "", "Sort by a JSONPath expression, e.g. .metadata.creationTimestamp.")
	return cmd
}

// Run lists or fetches the objects of args.
func (o *GetOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out, errOut io.Writer, args []string) error {
	if o.Raw != "" {
		if len(args) > 0 {
			return fmt.Errorf("--raw takes no resource arguments")
		}
		return getRaw(ctx, f, out, o.Raw)
	}
	objPrinter, err := printers.ParseOutput(o.Output)
	if err != nil {
		return err
	}
	if objPrinter != nil {
		objPrinter.ShowManagedFields = o.ShowManagedFields
	}
	targets, err := o.targets(f, in, args)
	if err != nil {
		return err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if o.AllNamespaces {
		if hasNames(targets) && len(o.Files) == 0 {
			return fmt.Errorf("a resource cannot be retrieved by name across all namespaces; drop -A or give -n NAMESPACE")
		}
		ns = ""
	}
	if (o.Watch || o.WatchOnly) && len(targets) != 1 {
		return fmt.Errorf("watch works on one resource type at a time, not %d", len(targets))
	}
	if o.SortBy != "" {
		if o.sortKey, err = printers.ParseSortBy(o.SortBy); err != nil {
			return err
		}
	}
	if objPrinter != nil {
		objPrinter.NoHeaders = o.NoHeaders
		return o.runObjects(ctx, f, out, errOut, targets, ns, objPrinter)
	}
	return o.runTables(ctx, f, out, errOut, targets, ns, len(targets) > 1 || o.ShowKind)
}

// targets resolves the arguments, or the objects of -f, one target per
// kind and namespace.
func (o *GetOptions) targets(f *cli.Factory, in io.Reader, args []string) ([]cli.Target, error) {
	if len(o.Files) == 0 {
		r, err := f.NewResolver()
		if err != nil {
			return nil, err
		}
		return r.Targets(args)
	}
	if len(args) > 0 {
		return nil, fmt.Errorf("give either -f or resource arguments, not both")
	}
	objs, err := readManifests(f, in, o.Files, o.Recursive)
	if err != nil {
		return nil, err
	}
	var targets []cli.Target
	index := map[string]int{}
	for _, obj := range objs {
		key := obj.Mapping.Resource.String() + "/" + obj.GetNamespace()
		i, ok := index[key]
		if !ok {
			i = len(targets)
			index[key] = i
			targets = append(targets, cli.Target{Mapping: obj.Mapping, Namespace: obj.GetNamespace()})
		}
		targets[i].Names = append(targets[i].Names, obj.GetName())
	}
	return targets, nil
}

func (o *GetOptions) listParams() map[string]string {
	p := map[string]string{"labelSelector": o.Selector, "fieldSelector": o.FieldSelector}
	if o.sortKey != nil {
		p["includeObject"] = "Object"
	}
	return p
}

// sortRows orders a table's rows by --sort-by over the rows' objects.
func (o *GetOptions) sortRows(t *metav1.Table) error {
	if o.sortKey == nil || t == nil {
		return nil
	}
	objs := make([]any, len(t.Rows))
	for i, r := range t.Rows {
		var v any
		if err := utiljson.Unmarshal(r.Object.Raw, &v); err != nil {
			return fmt.Errorf("--sort-by: decoding a row's object: %w", err)
		}
		objs[i] = v
	}
	idx := make([]int, len(t.Rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return o.sortKey.Less(objs[idx[a]], objs[idx[b]]) })
	rows := make([]metav1.TableRow, len(t.Rows))
	for i, j := range idx {
		rows[i] = t.Rows[j]
	}
	t.Rows = rows
	return nil
}

func (o *GetOptions) runTables(ctx context.Context, f *cli.Factory, out, errOut io.Writer, targets []cli.Target, ns string, withKind bool) error {
	rc, err := f.RawClient()
	if err != nil {
		return err
	}
	cols := printers.NewColumns(out)
	var errs []error
	printed := 0
	for _, t := range targets {
		opts := printers.TableOptions{
			Wide: o.Output == "wide", NoHeaders: o.NoHeaders, ShowLabels: o.ShowLabels,
			LabelColumns: o.LabelColumns, WithNamespace: o.AllNamespaces && namespaced(t.Mapping),
		}
		if withKind {
			opts.KindPrefix = cli.KindName(t.Mapping)
		}
		table, listRV, terrs := o.fetchTable(ctx, rc, t, t.In(ns))
		errs = append(errs, terrs...)
		if err := o.sortRows(table); err != nil {
			return err
		}
		if !o.WatchOnly && table != nil && len(table.Rows) > 0 {
			if printed > 0 {
				fmt.Fprintln(out)
				cols = printers.NewColumns(out)
			}
			printed++
			if err := printers.PrintTable(cols, table, opts); err != nil {
				return err
			}
		}
		if o.Watch || o.WatchOnly {
			if table != nil && len(table.Rows) > 0 && !o.WatchOnly {
				opts.NoHeaders = true
			}
			return errors.Join(append(errs, o.watchTable(ctx, rc, t, t.In(ns), listRV, cols, opts))...)
		}
	}
	if printed == 0 && len(errs) == 0 && !hasNames(targets) {
		if ns == "" || !anyNamespaced(targets) {
			fmt.Fprintln(errOut, "No resources found")
		} else {
			fmt.Fprintf(errOut, "No resources found in %s namespace.\n", ns)
		}
	}
	return errors.Join(errs...)
}

func hasNames(ts []cli.Target) bool {
	for _, t := range ts {
		if len(t.Names) > 0 {
			return true
		}
	}
	return false
}

func anyNamespaced(ts []cli.Target) bool {
	for _, t := range ts {
		if namespaced(t.Mapping) {
			return true
		}
	}
	return false
}

// fetchTable returns one table with the rows of every name of t (or the
// list), and the list's resourceVersion for a watch.
func (o *GetOptions) fetchTable(ctx context.Context, rc restGetter, t cli.Target, ns string) (*metav1.Table, string, []error) {
	if (o.Watch || o.WatchOnly) && len(t.Names) == 1 {
		// A list narrowed to the name gives the resourceVersion to watch from.
		params := o.listParams()
		params["fieldSelector"] = joinSelectors(o.FieldSelector, "metadata.name="+t.Names[0])
		table, err := cli.GetTable(ctx, rc, cli.ResourcePath(t.Mapping, ns, ""), params)
		if err != nil {
			return nil, "", []error{err}
		}
		if len(table.Rows) == 0 && !o.IgnoreNotFound {
			return nil, "", []error{fmt.Errorf("%s %q not found", cli.KindName(t.Mapping), t.Names[0])}
		}
		return table, table.ResourceVersion, nil
	}
	if len(t.Names) == 0 {
		table, err := cli.GetTable(ctx, rc, cli.ResourcePath(t.Mapping, ns, ""), o.listParams())
		if err != nil {
			return nil, "", []error{err}
		}
		return table, table.ResourceVersion, nil
	}
	var merged *metav1.Table
	var errs []error
	for _, name := range t.Names {
		var params map[string]string
		if o.sortKey != nil {
			params = map[string]string{"includeObject": "Object"}
		}
		table, err := cli.GetTable(ctx, rc, cli.ResourcePath(t.Mapping, ns, name), params)
		if err != nil {
			if !(o.IgnoreNotFound && isNotFound(err)) {
				errs = append(errs, err)
			}
			continue
		}
		if merged == nil {
			merged = table
			continue
		}
		merged.Rows = append(merged.Rows, table.Rows...)
	}
	return merged, "", errs
}

// watchEvent is one frame of a watch stream of Tables.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watchTable streams rows until the context ends or the server closes.
func (o *GetOptions) watchTable(ctx context.Context, rc restGetter, t cli.Target, ns, rv string, cols *printers.Columns, opts printers.TableOptions) error {
	params := o.listParams()
	params["watch"] = "true"
	params["resourceVersion"] = rv
	if len(t.Names) == 1 {
		params["fieldSelector"] = joinSelectors(o.FieldSelector, "metadata.name="+t.Names[0])
	}
	req := rc.Get().AbsPath(cli.ResourcePath(t.Mapping, ns, "")).SetHeader("Accept", cli.TableAccept)
	for k, v := range params {
		if v != "" {
			req = req.Param(k, v)
		}
	}
	stream, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer stream.Close()
	dec := json.NewDecoder(bufio.NewReader(stream))
	var columns []metav1.TableColumnDefinition
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading the watch: %w", err)
		}
		if ev.Type == "ERROR" {
			var st metav1.Status
			_ = json.Unmarshal(ev.Object, &st)
			return fmt.Errorf("watch ended by the server: %s", st.Message)
		}
		var table metav1.Table
		if err := utiljson.Unmarshal(ev.Object, &table); err != nil {
			return fmt.Errorf("decoding a watch event: %w", err)
		}
		if len(table.ColumnDefinitions) > 0 {
			columns = table.ColumnDefinitions
			if !opts.NoHeaders {
				cols.Add(printers.Header(&table, opts)...)
				opts.NoHeaders = true
			}
		}
		rows, err := printers.Rows(&table, columns, opts)
		if err != nil {
			return err
		}
		for _, r := range rows {
			cols.Add(r...)
		}
		if err := cols.Flush(); err != nil {
			return err
		}
	}
}

func (o *GetOptions) runObjects(ctx context.Context, f *cli.Factory, out, errOut io.Writer, targets []cli.Target, ns string, p *printers.ObjectPrinter) error {
	dyn, err := f.Dynamic()
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	var errs []error
	var rv string
	single := len(targets) == 1 && len(targets[0].Names) == 1
	for _, t := range targets {
		rc := resourceClient(dyn, t.Mapping, t.In(ns))
		if len(t.Names) == 0 {
			list, err := rc.List(ctx, metav1.ListOptions{LabelSelector: o.Selector, FieldSelector: o.FieldSelector})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			rv = list.GetResourceVersion()
			for i := range list.Items {
				objs = append(objs, &list.Items[i])
			}
			continue
		}
		for _, name := range t.Names {
			obj, err := rc.Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				rv = obj.GetResourceVersion()
			}
			if err != nil {
				if !(o.IgnoreNotFound && isNotFound(err)) {
					errs = append(errs, err)
				}
				continue
			}
			objs = append(objs, obj)
		}
	}
	if o.sortKey != nil {
		o.sortKey.SortObjects(objs)
	}
	if o.WatchOnly {
		objs = nil
	}
	if len(objs) > 0 || (!single && !o.WatchOnly) {
		if len(objs) == 0 && p.Format == printers.FormatName {
			fmt.Fprintln(errOut, "No resources found")
		} else if err := p.Print(out, objs, single); err != nil {
			return err
		}
	}
	if o.Watch || o.WatchOnly {
		return o.watchObjects(ctx, dyn, targets[0], targets[0].In(ns), rv, out, p)
	}
	return errors.Join(errs...)
}

func (o *GetOptions) watchObjects(ctx context.Context, dyn dynamicInterface, t cli.Target, ns, rv string, out io.Writer, p *printers.ObjectPrinter) error {
	opts := metav1.ListOptions{LabelSelector: o.Selector, FieldSelector: o.FieldSelector, ResourceVersion: rv}
	if len(t.Names) == 1 {
		opts.FieldSelector = joinSelectors(o.FieldSelector, "metadata.name="+t.Names[0])
	}
	w, err := resourceClient(dyn, t.Mapping, ns).Watch(ctx, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if err := p.Print(out, []*unstructured.Unstructured{u}, true); err != nil {
				return err
			}
			if p.Format == printers.FormatYAML {
				fmt.Fprintln(out, "---")
			}
		}
	}
}

// joinSelectors joins non-empty selectors with ",".
func joinSelectors(sels ...string) string {
	var out []string
	for _, s := range sels {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

// getRaw prints the answer to GET path.
func getRaw(ctx context.Context, f *cli.Factory, out io.Writer, path string) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("--raw %q: give a path starting with /", path)
	}
	rc, err := f.RawClient()
	if err != nil {
		return err
	}
	p, query, _ := strings.Cut(path, "?")
	req := rc.Get().AbsPath(p)
	if query != "" {
		values, err := url.ParseQuery(query)
		if err != nil {
			return fmt.Errorf("--raw %q: %w", path, err)
		}
		for k, vs := range values {
			for _, v := range vs {
				req = req.Param(k, v)
			}
		}
	}
	res := req.Do(ctx)
	if err := res.Error(); err != nil {
		return err
	}
	body, err := res.Raw()
	if err != nil {
		return err
	}
	_, err = out.Write(body)
	return err
}
