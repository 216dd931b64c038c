package printers

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TableOptions say how a server Table is printed.
type TableOptions struct {
	// Wide includes the columns with priority above 0 (-o wide).
	Wide bool
	// WithNamespace adds a NAMESPACE column first (-A).
	WithNamespace bool
	// KindPrefix, when set, is printed as "KindPrefix/" before each name
	// (several kinds at once).
	KindPrefix string
	// NoHeaders leaves the header out (--no-headers, watch events).
	NoHeaders bool
	// ShowLabels adds a LABELS column (--show-labels).
	ShowLabels bool
	// LabelColumns adds one column per label key (-L key).
	LabelColumns []string
}

// rowMeta is the part of a row's object that the printer needs.
type rowMeta struct {
	Metadata struct {
		Namespace string            `json:"namespace"`
		Name      string            `json:"name"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// Header returns the header cells of t.
func Header(t *metav1.Table, o TableOptions) []string {
	var h []string
	if o.WithNamespace {
		h = append(h, "NAMESPACE")
	}
	for _, c := range t.ColumnDefinitions {
		if c.Priority > 0 && !o.Wide {
			continue
		}
		h = append(h, strings.ToUpper(c.Name))
	}
	for _, k := range o.LabelColumns {
		h = append(h, strings.ToUpper(labelColumnName(k)))
	}
	if o.ShowLabels {
		h = append(h, "LABELS")
	}
	return h
}

func labelColumnName(key string) string {
	if i := strings.LastIndex(key, "/"); i >= 0 {
		return key[i+1:]
	}
	return key
}

// Rows returns the cells of t's rows. columns are t's column definitions,
// which watch events after the first do not repeat.
func Rows(t *metav1.Table, columns []metav1.TableColumnDefinition, o TableOptions) ([][]string, error) {
	nameCol := -1
	for i, c := range columns {
		if c.Format == "name" {
			nameCol = i
			break
		}
	}
	if nameCol < 0 && len(columns) > 0 {
		nameCol = 0
	}
	var out [][]string
	for _, row := range t.Rows {
		var m rowMeta
		if len(row.Object.Raw) > 0 {
			if err := json.Unmarshal(row.Object.Raw, &m); err != nil {
				return nil, fmt.Errorf("decoding a table row's object: %w", err)
			}
		}
		var cells []string
		if o.WithNamespace {
			cells = append(cells, m.Metadata.Namespace)
		}
		for i, cell := range row.Cells {
			if i >= len(columns) {
				break
			}
			if columns[i].Priority > 0 && !o.Wide {
				continue
			}
			s := cellString(cell)
			if i == nameCol && o.KindPrefix != "" {
				s = o.KindPrefix + "/" + s
			}
			cells = append(cells, s)
		}
		for _, k := range o.LabelColumns {
			cells = append(cells, m.Metadata.Labels[k])
		}
		if o.ShowLabels {
			cells = append(cells, FormatLabels(m.Metadata.Labels))
		}
		out = append(out, cells)
	}
	return out, nil
}

// FormatLabels prints labels as k=v,k=v sorted, or <none>.
func FormatLabels(labels map[string]string) string {
	if len(labels) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}

// PrintTable queues t on c (header unless NoHeaders) and flushes.
func PrintTable(c *Columns, t *metav1.Table, o TableOptions) error {
	if !o.NoHeaders {
		c.Add(Header(t, o)...)
	}
	rows, err := Rows(t, t.ColumnDefinitions, o)
	if err != nil {
		return err
	}
	for _, r := range rows {
		c.Add(r...)
	}
	return c.Flush()
}
