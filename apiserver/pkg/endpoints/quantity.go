package endpoints

import (
	"fmt"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// maxQuantityScale bounds the decimal exponent of a quantity. A value like
// "1e1000000000" parses cheaply but makes every later comparison compute a
// billion-digit number; no real resource amount needs more than a few dozen.
const maxQuantityScale = 1000

var quantityType = reflect.TypeOf(resource.Quantity{})

// checkQuantities rejects quantities whose exponent is out of range, before
// defaulting and validation compare them.
func (q *quantityTypes) checkQuantities(obj any) error {
	return q.walk(reflect.ValueOf(obj), 0)
}

func (q *quantityTypes) walk(v reflect.Value, depth int) error {
	if depth > 64 || !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.Ptr, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return q.walk(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == quantityType {
			q := v.Interface().(resource.Quantity)
			if d := q.AsDec(); d.Scale() > maxQuantityScale || d.Scale() < -maxQuantityScale {
				return apierrors.NewBadRequest(fmt.Sprintf("quantity with exponent %d is out of range: at most %d is supported", -d.Scale(), maxQuantityScale))
			}
			return nil
		}
		for i := 0; i < v.NumField(); i++ {
			if err := q.walk(v.Field(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := q.walk(v.Index(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.Type().Elem() != quantityType && !q.has(v.Type().Elem()) {
			return nil
		}
		it := v.MapRange()
		for it.Next() {
			if err := q.walk(it.Value(), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// quantityTypes caches containsQuantity per type: the answer never changes
// and the walk is not free. The Handler owns one.
type quantityTypes struct{ m sync.Map } // reflect.Type -> bool

// has reports whether values of type t can hold a Quantity.
func (q *quantityTypes) has(t reflect.Type) bool {
	if v, ok := q.m.Load(t); ok {
		return v.(bool)
	}
	has := containsQuantity(t, 0)
	q.m.Store(t, has)
	return has
}

// containsQuantity reports whether values of t can hold a Quantity, so maps
// of strings (labels, data) are not walked.
func containsQuantity(t reflect.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t.Kind() {
	case reflect.Ptr, reflect.Slice, reflect.Array, reflect.Map:
		return containsQuantity(t.Elem(), depth+1)
	case reflect.Struct:
		if t == quantityType {
			return true
		}
		for i := 0; i < t.NumField(); i++ {
			if containsQuantity(t.Field(i).Type, depth+1) {
				return true
			}
		}
	case reflect.Interface:
		return true
	}
	return false
}

// hugeExponent finds a number token with an exponent of four or more
// digits, such as "1e-2147483648": the quantity parser hangs on those while
// decoding (upstream has the same bug), so such a body is refused before it
// is decoded. A token counts only when it stands alone: after a delimiter
// (or, in protobuf, a length byte) and before a delimiter or a quantity
// suffix, so hex digests and free text do not trip it.
func hugeExponent(data []byte) bool {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	startsToken := func(c byte) bool {
		switch c {
		case '"', '\'', ':', ',', '[', ' ', '\t', '\n', '\r':
			return true
		}
		return c < 0x20 || c >= 0x80
	}
	endsToken := func(rest []byte) bool {
		if len(rest) == 0 {
			return true
		}
		switch rest[0] {
		case '"', '\'', ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		for _, suffix := range []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"} {
			if len(rest) >= len(suffix) && string(rest[:len(suffix)]) == suffix {
				after := rest[len(suffix):]
				return len(after) == 0 || after[0] == '"' || after[0] == '\'' || after[0] < 0x20 || after[0] == ',' || after[0] == '}' || after[0] == '\n'
			}
		}
		return rest[0] < 0x20
	}
	for i := 0; i < len(data); i++ {
		if data[i] != 'e' && data[i] != 'E' {
			continue
		}
		// Mantissa: digits and at most one dot, right before the e.
		j := i
		for j > 0 && (isDigit(data[j-1]) || data[j-1] == '.') {
			j--
		}
		if j == i {
			continue
		}
		if j > 0 && (data[j-1] == '+' || data[j-1] == '-') {
			j--
		}
		if j > 0 && !startsToken(data[j-1]) {
			continue
		}
		k := i + 1
		if k < len(data) && (data[k] == '+' || data[k] == '-') {
			k++
		}
		d := k
		for d < len(data) && isDigit(data[d]) {
			d++
		}
		if d-k >= 4 && endsToken(data[d:]) {
			return true
		}
	}
	return false
}
