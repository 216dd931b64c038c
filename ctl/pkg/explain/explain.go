package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Schema is the part of an OpenAPI v3 schema that explain reads.
type Schema struct {
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Description          string             `json:"description"`
	Ref                  string             `json:"$ref"`
	AllOf                []*Schema          `json:"allOf"`
	Properties           map[string]*Schema `json:"properties"`
	Items                *Schema            `json:"items"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	Required             []string           `json:"required"`
	Enum                 []any              `json:"enum"`
	GVK                  []GVK              `json:"x-kubernetes-group-version-kind"`
}

// GVK is an x-kubernetes-group-version-kind entry.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Document is one OpenAPI v3 group-version document.
type Document struct {
	Components struct {
		Schemas map[string]*Schema `json:"schemas"`
	} `json:"components"`
}

// Index is the /openapi/v3 discovery document.
type Index struct {
	Paths map[string]struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	} `json:"paths"`
}

// DocumentPath returns the key of gv in the index ("api/v1",
// "apis/apps/v1").
func DocumentPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// ParseDocument decodes a group-version document.
func ParseDocument(data []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI document: %w", err)
	}
	return &d, nil
}

// resolve follows $ref (directly or in allOf).
func (d *Document) resolve(s *Schema) *Schema {
	for i := 0; i < 32 && s != nil; i++ {
		ref := s.Ref
		if ref == "" && len(s.AllOf) == 1 {
			ref = s.AllOf[0].Ref
		}
		if ref == "" {
			return s
		}
		target := d.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		if target == nil {
			return s
		}
		if s.Description != "" && target.Description == "" {
			cp := *target
			cp.Description = s.Description
			target = &cp
		}
		s = target
	}
	return s
}

// KindSchema finds the schema of gvk.
func (d *Document) KindSchema(gvk schema.GroupVersionKind) (*Schema, error) {
	for _, s := range d.Components.Schemas {
		for _, g := range s.GVK {
			if g.Group == gvk.Group && g.Version == gvk.Version && g.Kind == gvk.Kind {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("the OpenAPI document has no schema for %s", gvk)
}

// Field walks path (e.g. ["spec", "template"]) from s.
func (d *Document) Field(s *Schema, path []string) (*Schema, error) {
	cur := d.resolve(s)
	for i, name := range path {
		cur = elem(d, cur)
		next, ok := cur.Properties[name]
		if !ok {
			return nil, fmt.Errorf("field %q does not exist (at %s)", name, strings.Join(path[:i+1], "."))
		}
		cur = d.resolve(next)
	}
	return cur, nil
}

// elem unwraps arrays and maps to their element schema.
func elem(d *Document, s *Schema) *Schema {
	for i := 0; i < 8; i++ {
		switch {
		case s.Type == "array" && s.Items != nil:
			s = d.resolve(s.Items)
		case s.Type == "object" && len(s.Properties) == 0 && s.AdditionalProperties != nil:
			s = d.resolve(s.AdditionalProperties)
		default:
			return s
		}
	}
	return s
}

// TypeName is the type as kubectl explain prints it.
func (d *Document) TypeName(s *Schema) string {
	ref := s.Ref
	if ref == "" && len(s.AllOf) == 1 {
		ref = s.AllOf[0].Ref
	}
	if ref != "" {
		name := ref[strings.LastIndex(ref, ".")+1:]
		if t := d.resolve(s); t != nil && t.Type != "" && t.Type != "object" {
			return t.Type
		}
		return name
	}
	switch s.Type {
	case "array":
		if s.Items != nil {
			return "[]" + d.TypeName(s.Items)
		}
		return "[]Object"
	case "object":
		if s.AdditionalProperties != nil {
			return "map[string]" + d.TypeName(s.AdditionalProperties)
		}
		return "Object"
	case "":
		return "Object"
	}
	return s.Type
}

// Options say what to print.
type Options struct {
	GVK       schema.GroupVersionKind
	Path      []string
	Recursive bool
}

// Print writes the explanation of the kind or field in kubectl explain's
// layout.
func Print(w io.Writer, d *Document, o Options) error {
	kind, err := d.KindSchema(o.GVK)
	if err != nil {
		return err
	}
	s, err := d.Field(kind, o.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.ToLower(o.GVK.Kind), err)
	}
	if o.GVK.Group != "" {
		fmt.Fprintf(w, "GROUP:      %s\n", o.GVK.Group)
	}
	fmt.Fprintf(w, "KIND:       %s\nVERSION:    %s\n\n", o.GVK.Kind, o.GVK.Version)
	var descs []string
	if len(o.Path) > 0 {
		prop := d.property(kind, o.Path)
		fmt.Fprintf(w, "FIELD: %s <%s>\n", o.Path[len(o.Path)-1], d.TypeName(prop))
		if len(s.Enum) > 0 {
			fmt.Fprintf(w, "ENUM:\n")
			for _, v := range s.Enum {
				fmt.Fprintf(w, "    %s\n", enumValue(v))
			}
		} else {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
		if prop.Description != "" {
			descs = append(descs, prop.Description)
		}
		if t := elem(d, d.resolve(prop)); t != prop && t.Description != "" && t.Description != prop.Description {
			descs = append(descs, t.Description)
		}
	} else if s.Description != "" {
		descs = append(descs, s.Description)
	}
	fmt.Fprintf(w, "DESCRIPTION:\n%s\n", indent(wrap(strings.Join(descs, "\n"), wrapWidth)+"\n", "    "))
	fields := elem(d, s)
	if len(fields.Properties) == 0 {
		fmt.Fprintln(w)
		return nil
	}
	fmt.Fprintf(w, "FIELDS:\n")
	if o.Recursive {
		d.printTree(w, fields, 1, map[*Schema]bool{})
		fmt.Fprintln(w)
		return nil
	}
	required := map[string]bool{}
	for _, r := range fields.Required {
		required[r] = true
	}
	for _, name := range sortedKeys(fields.Properties) {
		f := fields.Properties[name]
		req := ""
		if required[name] {
			req = " -required-"
		}
		fmt.Fprintf(w, "  %s\t<%s>%s\n", name, d.TypeName(f), req)
		if enum := d.resolve(f).Enum; len(enum) > 0 {
			fmt.Fprintf(w, "  enum: %s\n", enumList(enum))
		}
		desc := f.Description
		if desc == "" {
			desc = d.resolve(f).Description
		}
		fmt.Fprintf(w, "%s\n\n", indent(wrap(desc, wrapWidth), "    "))
	}
	fmt.Fprintln(w)
	return nil
}

// wrapWidth is the width of description text, after its indentation.
const wrapWidth = 76

// property returns the schema of the last field of path as its parent
// declares it (with the field's own description and $ref).
func (d *Document) property(kind *Schema, path []string) *Schema {
	parent, err := d.Field(kind, path[:len(path)-1])
	if err != nil {
		return &Schema{}
	}
	if p := elem(d, parent).Properties[path[len(path)-1]]; p != nil {
		return p
	}
	return &Schema{}
}

func (d *Document) printTree(w io.Writer, s *Schema, depth int, seen map[*Schema]bool) {
	if seen[s] || depth > 12 {
		return
	}
	seen[s] = true
	defer delete(seen, s)
	for _, name := range sortedKeys(s.Properties) {
		f := s.Properties[name]
		fmt.Fprintf(w, "%s%s\t<%s>%s\n", strings.Repeat("  ", depth), name, d.TypeName(f), requiredMark(s, name))
		if enum := d.resolve(f).Enum; len(enum) > 0 {
			fmt.Fprintf(w, "%senum: %s\n", strings.Repeat("  ", depth), enumList(enum))
		}
		child := elem(d, d.resolve(f))
		if len(child.Properties) > 0 {
			d.printTree(w, child, depth+1, seen)
		}
	}
}

func sortedKeys(m map[string]*Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func wrap(s string, width int) string {
	if s == "" {
		return "<empty>"
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		// Keep a paragraph's leading spaces (list items) and runs of
		// spaces inside it, as kubectl does.
		rest := strings.TrimLeft(para, " ")
		line := para[:len(para)-len(rest)]
		started := false
		for _, word := range strings.Split(rest, " ") {
			if started && word != "" && len(line)+1+len(word) > width {
				out = append(out, strings.TrimRight(line, " "))
				line = word
				continue
			}
			if started {
				line += " "
			}
			line += word
			started = true
		}
		out = append(out, strings.TrimRight(line, " "))
	}
	return strings.Join(out, "\n")
}

// indent prefixes every line, empty ones too, as kubectl does.
func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// enumList lists at most four values, as kubectl does in field lists.
func enumList(enum []any) string {
	var vals []string
	for i, v := range enum {
		if i == 4 {
			vals = append(vals, "....")
			break
		}
		vals = append(vals, enumValue(v))
	}
	return strings.Join(vals, ", ")
}

func requiredMark(s *Schema, name string) string {
	for _, r := range s.Required {
		if r == name {
			return " -required-"
		}
	}
	return ""
}

// enumValue prints an enum value; the empty string shows as "".
func enumValue(v any) string {
	if s := fmt.Sprint(v); s != "" {
		return s
	}
	return `""`
}
