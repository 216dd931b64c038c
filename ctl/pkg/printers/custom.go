package printers

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
)

// customColumn is one HEADER:.json.path of -o custom-columns.
type customColumn struct {
	header string
	jp     *jsonpath.JSONPath
}

// relaxedJSONPath turns ".a.b" or "a.b" into "{.a.b}", as kubectl does.
func relaxedJSONPath(expr string) string {
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "{") && strings.HasSuffix(expr, "}") {
		return expr
	}
	if !strings.HasPrefix(expr, ".") {
		expr = "." + expr
	}
	return "{" + expr + "}"
}

func parseJSONPath(name, expr string) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New(name).AllowMissingKeys(true)
	if err := jp.Parse(relaxedJSONPath(expr)); err != nil {
		return nil, fmt.Errorf("bad JSONPath expression %q: %w", expr, err)
	}
	return jp, nil
}

func parseCustomColumns(spec string) ([]customColumn, error) {
	if spec == "" {
		return nil, fmt.Errorf("-o custom-columns needs HEADER:JSONPATH pairs, e.g. -o custom-columns=NAME:.metadata.name")
	}
	var cols []customColumn
	for _, part := range strings.Split(spec, ",") {
		header, expr, ok := strings.Cut(part, ":")
		if !ok || header == "" || expr == "" {
			return nil, fmt.Errorf("-o custom-columns: %q is not HEADER:JSONPATH", part)
		}
		jp, err := parseJSONPath(header, expr)
		if err != nil {
			return nil, fmt.Errorf("-o custom-columns: %w", err)
		}
		cols = append(cols, customColumn{header: header, jp: jp})
	}
	return cols, nil
}

// printCustomColumns writes one row per object.
func printCustomColumns(w io.Writer, cols []customColumn, objs []*unstructured.Unstructured, noHeaders bool) error {
	c := NewColumns(w)
	if !noHeaders {
		h := make([]string, len(cols))
		for i, col := range cols {
			h[i] = col.header
		}
		c.Add(h...)
	}
	for _, o := range objs {
		row := make([]string, len(cols))
		for i, col := range cols {
			row[i] = columnValue(col.jp, o.Object)
		}
		c.Add(row...)
	}
	return c.Flush()
}

// columnValue joins every match with ",", or is <none>.
func columnValue(jp *jsonpath.JSONPath, obj any) string {
	results, err := jp.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return "<none>"
	}
	var vals []string
	for _, r := range results {
		for _, v := range r {
			vals = append(vals, fmt.Sprintf("%v", v.Interface()))
		}
	}
	return strings.Join(vals, ",")
}

// SortKey evaluates a --sort-by expression on objects.
type SortKey struct {
	jp *jsonpath.JSONPath
}

// ParseSortBy parses --sort-by (e.g. .metadata.creationTimestamp).
func ParseSortBy(expr string) (*SortKey, error) {
	jp, err := parseJSONPath("sort-by", expr)
	if err != nil {
		return nil, fmt.Errorf("--sort-by: %w", err)
	}
	return &SortKey{jp: jp}, nil
}

func (k *SortKey) value(obj any) any {
	results, err := k.jp.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	v := results[0][0]
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	return v.Interface()
}

// Less orders two objects by the key: missing values first, numbers
// numerically, RFC 3339 times chronologically, the rest as text.
func (k *SortKey) Less(a, b any) bool {
	va, vb := k.value(a), k.value(b)
	switch {
	case va == nil:
		return vb != nil
	case vb == nil:
		return false
	}
	if fa, ok := number(va); ok {
		if fb, ok := number(vb); ok {
			return fa < fb
		}
	}
	sa, sb := fmt.Sprint(va), fmt.Sprint(vb)
	if ta, err := time.Parse(time.RFC3339, sa); err == nil {
		if tb, err := time.Parse(time.RFC3339, sb); err == nil {
			return ta.Before(tb)
		}
	}
	return sa < sb
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case int32:
		return float64(n), true
	}
	return 0, false
}

// SortObjects sorts objs by the key, keeping the order of equal ones.
func (k *SortKey) SortObjects(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool { return k.Less(objs[i].Object, objs[j].Object) })
}
