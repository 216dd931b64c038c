package printers

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"skiff.dev/apiserver/pkg/printers/tables"
	"skiff.dev/apiserver/pkg/registry"
)

// Printer turns objects and lists into metav1.Table as upstream's server does.
// A Printer is safe for concurrent use once built: New is the only writer of
// its handler map.
type Printer struct {
	clock    clock.PassiveClock
	handlers map[reflect.Type]tables.Handler
}

// Option configures a Printer.
type Option func(*Printer)

// WithClock sets the clock that AGE, LAST SEEN and the like are measured
// against. The default is the real clock.
func WithClock(c clock.PassiveClock) Option {
	return func(p *Printer) {
		if c != nil {
			p.clock = c
		}
	}
}

// New returns a Printer with the Table of every kind of the resource table
// that names one (its row's Printer, from package tables) and of
// ComponentStatus; other kinds get upstream's default NAME / CREATED AT
// table.
func New(opts ...Option) *Printer {
	p := &Printer{
		clock:    clock.RealClock{},
		handlers: map[reflect.Type]tables.Handler{},
	}
	for _, opt := range opts {
		opt(p)
	}
	kinds := []*tables.Kind{
		// Answered, not stored: no row names it.
		tables.ComponentStatus,
	}
	for _, r := range registry.Resources() {
		if r.Printer != nil {
			kinds = append(kinds, r.Printer)
		}
	}
	for _, k := range kinds {
		for typ, h := range k.Handlers(p.clock) {
			p.handlers[typ] = h
		}
	}
	return p
}

// errNilObject is returned when Table is given nothing to print.
var errNilObject = errors.New("printers: cannot convert a nil object to a table")

// Table converts a single object (e.g. *corev1.Pod) or a list (e.g.
// *corev1.PodList) to a Table. Rows carry the printed item as Object.
// noHeaders=true leaves ColumnDefinitions empty, as upstream does for watch
// events after the first.
func (p *Printer) Table(obj runtime.Object, noHeaders bool) (*metav1.Table, error) {
	if isNil(obj) {
		return nil, errNilObject
	}
	h, ok := p.handlers[reflect.TypeOf(obj)]
	if !ok {
		return defaultTable(obj, noHeaders)
	}
	rows, err := h.Rows(obj)
	if err != nil {
		return nil, err
	}
	table := &metav1.Table{
		TypeMeta: metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "Table"},
		Rows:     rows,
	}
	if !noHeaders {
		// The server always prints the wide form, so every column is kept.
		table.ColumnDefinitions = append([]metav1.TableColumnDefinition(nil), h.Columns...)
	}
	setListMeta(table, obj)
	return table, nil
}

// defaultTable mirrors k8s.io/apiserver/pkg/registry/rest defaultTableConvertor:
// the name and the creation time in RFC 3339, for any object with metadata.
func defaultTable(obj runtime.Object, noHeaders bool) (*metav1.Table, error) {
	table := &metav1.Table{
		TypeMeta: metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "Table"},
	}
	addRow := func(item runtime.Object) error {
		m, err := meta.Accessor(item)
		if err != nil {
			return fmt.Errorf("printers: %T cannot be converted to a table: %w", item, err)
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []interface{}{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)},
			Object: runtime.RawExtension{Object: item},
		})
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, addRow); err != nil {
			return nil, err
		}
	} else if err := addRow(obj); err != nil {
		return nil, err
	}
	setListMeta(table, obj)
	if !noHeaders {
		table.ColumnDefinitions = []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
			{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		}
	}
	return table, nil
}

// setListMeta copies resourceVersion, continue and remainingItemCount from a
// list, or the resourceVersion of a single object.
func setListMeta(table *metav1.Table, obj runtime.Object) {
	if m, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
		table.Continue = m.GetContinue()
		table.RemainingItemCount = m.GetRemainingItemCount()
		return
	}
	if m, err := meta.CommonAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
}

func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
