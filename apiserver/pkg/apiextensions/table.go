package apiextensions

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"
)

// Descriptions of the default columns, as upstream's.
const (
	nameDescription = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	ageDescription  = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

// compileJSONPath parses a printer column's path (".spec.replicas").
func compileJSONPath(path string) (*jsonpath.JSONPath, error) {
	p := jsonpath.New("column").AllowMissingKeys(true)
	if err := p.Parse(fmt.Sprintf("{%s}", path)); err != nil {
		return nil, err
	}
	return p, nil
}

// column is one compiled printer column.
type column struct {
	def  metav1.TableColumnDefinition
	path *jsonpath.JSONPath
}

// tablePrinter prints a version's objects with its additionalPrinterColumns
// after NAME, or NAME and AGE when it has none, as upstream's tableconvertor.
type tablePrinter struct {
	columns []column
	now     func() time.Time
}

func newTablePrinter(cols []apiextensionsv1.CustomResourceColumnDefinition) (*tablePrinter, error) {
	if len(cols) == 0 {
		cols = []apiextensionsv1.CustomResourceColumnDefinition{{
			Name: "Age", Type: "date", Description: ageDescription, JSONPath: ".metadata.creationTimestamp",
		}}
	}
	t := &tablePrinter{now: time.Now}
	for _, c := range cols {
		p, err := compileJSONPath(c.JSONPath)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		desc := c.Description
		if desc == "" {
			desc = fmt.Sprintf("Custom resource definition column (in JSONPath format): %s", c.JSONPath)
		}
		t.columns = append(t.columns, column{
			def:  metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority},
			path: p,
		})
	}
	return t, nil
}

// Table converts an object or a list.
func (t *tablePrinter) Table(obj runtime.Object, noHeaders bool) (*metav1.Table, error) {
	table := &metav1.Table{}
	if !noHeaders {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: "Name", Type: "string", Format: "name", Description: nameDescription,
		})
		for _, c := range t.columns {
			table.ColumnDefinitions = append(table.ColumnDefinitions, c.def)
		}
	}
	add := func(item runtime.Object) error {
		u, ok := item.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("expected an unstructured object, got %T", item)
		}
		cells := []any{u.GetName()}
		for _, c := range t.columns {
			cells = append(cells, t.cell(c, u))
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: u}})
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, add); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(obj); err == nil {
			table.ResourceVersion, table.Continue, table.RemainingItemCount = l.GetResourceVersion(), l.GetContinue(), l.GetRemainingItemCount()
		}
	} else {
		if err := add(obj); err != nil {
			return nil, err
		}
		if m, err := meta.Accessor(obj); err == nil {
			table.ResourceVersion = m.GetResourceVersion()
		}
	}
	return table, nil
}

// cell is a column's value: nil when the path finds nothing.
func (t *tablePrinter) cell(c column, u *unstructured.Unstructured) any {
	results, err := c.path.FindResults(u.Object)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	var values []any
	for _, r := range results[0] {
		if r.IsValid() && r.CanInterface() {
			values = append(values, r.Interface())
		}
	}
	if len(values) == 0 {
		return nil
	}
	if len(values) > 1 {
		parts := make([]string, 0, len(values))
		for _, v := range values {
			parts = append(parts, stringOf(v))
		}
		return strings.Join(parts, ",")
	}
	v := values[0]
	switch c.def.Type {
	case "date":
		s, ok := v.(string)
		if !ok {
			return nil
		}
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil
		}
		return duration.HumanDuration(t.now().Sub(ts))
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
		return nil
	case "number":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return n
		}
		return nil
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
		return nil
	}
	return stringOf(v)
}

func stringOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if k := reflect.ValueOf(v).Kind(); k == reflect.Map || k == reflect.Slice {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}
