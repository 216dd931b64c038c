package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// Format is an -o value other than a table.
type Format string

// The object formats.
const (
	FormatYAML     Format = "yaml"
	FormatJSON     Format = "json"
	FormatName     Format = "name"
	FormatJSONPath Format = "jsonpath"
	FormatCustom   Format = "custom-columns"
)

// ObjectPrinter prints objects in one format.
type ObjectPrinter struct {
	Format Format
	// Template is the JSONPath expression for FormatJSONPath.
	Template string
	// NoHeaders leaves out the header of custom-columns.
	NoHeaders bool
	// ShowManagedFields keeps metadata.managedFields, which kubectl leaves
	// out unless --show-managed-fields.
	ShowManagedFields bool
	jp                *jsonpath.JSONPath
	columns           []customColumn
}

// ParseOutput parses an -o value. It returns nil for the table formats
// ("" and "wide").
func ParseOutput(o string) (*ObjectPrinter, error) {
	switch {
	case o == "" || o == "wide":
		return nil, nil
	case o == "yaml" || o == "json" || o == "name":
		return &ObjectPrinter{Format: Format(o)}, nil
	case strings.HasPrefix(o, "jsonpath=") || strings.HasPrefix(o, "jsonpath-as-json="):
		_, tmpl, _ := strings.Cut(o, "=")
		jp := jsonpath.New("output").AllowMissingKeys(true)
		if err := jp.Parse(tmpl); err != nil {
			return nil, fmt.Errorf("-o %s: bad JSONPath expression: %w", o, err)
		}
		return &ObjectPrinter{Format: FormatJSONPath, Template: tmpl, jp: jp}, nil
	case strings.HasPrefix(o, "custom-columns="):
		cols, err := parseCustomColumns(strings.TrimPrefix(o, "custom-columns="))
		if err != nil {
			return nil, err
		}
		return &ObjectPrinter{Format: FormatCustom, columns: cols}, nil
	case o == "jsonpath":
		return nil, fmt.Errorf("-o jsonpath needs an expression: -o jsonpath='{.metadata.name}'")
	default:
		return nil, fmt.Errorf("unknown output format %q: use one of wide, yaml, json, name, jsonpath=EXPR, custom-columns=SPEC", o)
	}
}

// Print writes objs: one object as itself, several as a v1 List (yaml,
// json, jsonpath), or one "kind.group/name" line each (name).
func (p *ObjectPrinter) Print(w io.Writer, objs []*unstructured.Unstructured, single bool) error {
	if p.Format == FormatCustom {
		return printCustomColumns(w, p.columns, objs, p.NoHeaders)
	}
	if p.Format == FormatName {
		for _, o := range objs {
			if _, err := fmt.Fprintln(w, NameOf(o)); err != nil {
				return err
			}
		}
		return nil
	}
	if !p.ShowManagedFields {
		objs = withoutManagedFields(objs)
	}
	var v any
	if single && len(objs) == 1 {
		v = objs[0].Object
	} else {
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o.Object
		}
		v = map[string]any{
			"apiVersion": "v1", "kind": "List", "items": items,
			"metadata": map[string]any{"resourceVersion": ""},
		}
	}
	return p.printValue(w, v)
}

// withoutManagedFields returns objs without metadata.managedFields.
func withoutManagedFields(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = OmitManagedFields(o)
	}
	return out
}

// OmitManagedFields returns o without metadata.managedFields, as kubectl
// shows objects unless --show-managed-fields; it copies only the maps it
// changes, and returns o itself when it has none.
func OmitManagedFields(o *unstructured.Unstructured) *unstructured.Unstructured {
	m, ok := o.Object["metadata"].(map[string]any)
	if !ok {
		return o
	}
	if _, ok := m["managedFields"]; !ok {
		return o
	}
	meta := make(map[string]any, len(m))
	for k, v := range m {
		if k != "managedFields" {
			meta[k] = v
		}
	}
	obj := make(map[string]any, len(o.Object))
	for k, v := range o.Object {
		obj[k] = v
	}
	obj["metadata"] = meta
	return &unstructured.Unstructured{Object: obj}
}

func (p *ObjectPrinter) printValue(w io.Writer, v any) error {
	switch p.Format {
	case FormatJSON:
		b, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case FormatYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case FormatJSONPath:
		var buf bytes.Buffer
		if err := p.jp.Execute(&buf, v); err != nil {
			return fmt.Errorf("-o jsonpath: %w", err)
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	return fmt.Errorf("unknown format %q", p.Format)
}

// NameOf returns "kind.group/name" as kubectl -o name prints it.
func NameOf(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	k := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		k += "." + gvk.Group
	}
	return k + "/" + o.GetName()
}
