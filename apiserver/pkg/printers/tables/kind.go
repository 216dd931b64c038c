// Package tables holds each kind's server-side Table as upstream's printers
// print it: its columns and how an object of the kind (or of its list) fills
// them. A kind's row in the resource table (package registry) references its
// Kind; package printers builds its Printer from the rows.
package tables

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
)

// Handler prints one Go type: a kind or the list of a kind.
type Handler struct {
	Columns []metav1.TableColumnDefinition
	Rows    func(obj runtime.Object) ([]metav1.TableRow, error)
}

// Kind prints one kind and its list, with one set of columns as upstream.
type Kind struct {
	build func(p *printer) map[reflect.Type]Handler
}

// Handlers returns the handlers of the kind's objects and of its lists,
// keyed by their Go types; ages are measured against c.
func (k *Kind) Handlers(c clock.PassiveClock) map[reflect.Type]Handler {
	return k.build(&printer{clock: c})
}

// printer is what printing needs beyond the object: the clock that AGE,
// LAST SEEN and the like are measured against.
type printer struct {
	clock clock.PassiveClock
}

// handlers builds the handlers of a kind (*T) and its list (L).
func handlers[T any, PT interface {
	*T
	runtime.Object
}, L runtime.Object](columns []metav1.TableColumnDefinition, print func(PT) metav1.TableRow, items func(L) []T) map[reflect.Type]Handler {
	return map[reflect.Type]Handler{
		reflect.TypeFor[PT](): {
			Columns: columns,
			Rows: func(obj runtime.Object) ([]metav1.TableRow, error) {
				typed, ok := obj.(PT)
				if !ok {
					return nil, fmt.Errorf("printers: expected %v, got %T", reflect.TypeFor[PT](), obj)
				}
				return []metav1.TableRow{print(typed)}, nil
			},
		},
		reflect.TypeFor[L](): {
			Columns: columns,
			Rows: func(obj runtime.Object) ([]metav1.TableRow, error) {
				list, ok := obj.(L)
				if !ok {
					return nil, fmt.Errorf("printers: expected %v, got %T", reflect.TypeFor[L](), obj)
				}
				all := items(list)
				rows := make([]metav1.TableRow, 0, len(all))
				for i := range all {
					rows = append(rows, print(PT(&all[i])))
				}
				return rows, nil
			},
		},
	}
}
