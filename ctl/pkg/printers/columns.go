package printers

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// kubectl's tab writer settings: minimum cell width and padding.
const (
	minWidth = 6
	padding  = 3
)

// Columns aligns rows of cells. Widths are remembered between Flush calls
// so that rows printed later (a watch) stay under their header.
type Columns struct {
	out      io.Writer
	minWidth int
	padding  int
	widths   []int
	rows     [][]string
}

// NewColumns returns a Columns writing to out with kubectl's table
// layout (at least six wide, three spaces between columns).
func NewColumns(out io.Writer) *Columns {
	return &Columns{out: out, minWidth: minWidth, padding: padding}
}

// NewCompactColumns returns a Columns with two spaces between columns and
// no minimum width, the layout of kubectl's describe-style listings such
// as rollout history.
func NewCompactColumns(out io.Writer) *Columns { return &Columns{out: out, padding: 2} }

// Add queues one row.
func (c *Columns) Add(cells ...string) { c.rows = append(c.rows, cells) }

// Flush writes the queued rows.
func (c *Columns) Flush() error {
	for _, row := range c.rows {
		for i, cell := range row {
			if i == len(row)-1 {
				continue
			}
			for len(c.widths) <= i {
				c.widths = append(c.widths, c.minWidth)
			}
			if w := utf8.RuneCountInString(cell) + c.padding; w > c.widths[i] {
				c.widths[i] = w
			}
		}
	}
	var b strings.Builder
	for _, row := range c.rows {
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", c.widths[i]-utf8.RuneCountInString(cell)))
			}
		}
		b.WriteByte('\n')
	}
	c.rows = nil
	_, err := io.WriteString(c.out, b.String())
	return err
}

// cellString renders a table cell as kubectl does: strings are cut at the
// first line break (with "..." appended), nil is empty, anything else is
// printed with fmt.
func cellString(cell any) string {
	switch v := cell.(type) {
	case nil:
		return ""
	case string:
		if i := strings.IndexAny(v, "\f\n\r"); i >= 0 {
			return escape(v[:i]) + "..."
		}
		return escape(v)
	default:
		return escape(fmt.Sprint(v))
	}
}

// escape drops terminal control characters from server-provided text.
func escape(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		if r == '\t' {
			return ' '
		}
		return r
	}, s)
}
