package fastpath

import (
	"encoding/base64"
	"reflect"

	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v4/schema"
	"sigs.k8s.io/structured-merge-diff/v4/typed"
	"sigs.k8s.io/structured-merge-diff/v4/value"
)

// The walk below computes what SMD's TypedValue.Compare(live, new) finds
// Added or Modified (typed/compare.go), for a live object that is the
// empty object of the kind, while checking what ObjectToTyped's validation
// (typed/validate.go, with duplicates allowed) checks. Every function
// returns false when it meets something it does not mirror exactly, or
// something SMD would reject: the caller then takes the general path.

// viewKind is how SMD's reflection sees a value (valuereflect.go kind).
type viewKind uint8

const (
	viewNull viewKind = iota
	viewScalar
	viewStruct
	viewMap
	viewList
	// viewUnstructured: a map or list that a type's own conversion
	// returned, as []interface{} or map[string]interface{}.
	viewUnstructured
)

type scalarKind uint8

const (
	scalarInt scalarKind = iota
	scalarFloat
	scalarString
	scalarBool
)

// view is a value as SMD sees it: null, a scalar, a map (a struct or a Go
// map) or a list.
type view struct {
	kind viewKind
	v    reflect.Value // struct, map or slice
	sk   scalarKind
	i    int64
	f    float64
	s    string
	b    bool
	u    interface{}
}

// see is SMD's view of v, a value of p's Go type, as valueReflect.reuse
// makes it: converted by its own marshaling if it has one, then
// dereferenced.
func (p *plan) see(v reflect.Value) (view, bool) {
	if p.bad {
		return view{}, false
	}
	if p.conv {
		u, err := p.entry.ToUnstructured(v)
		if err != nil {
			return view{}, false
		}
		if u == nil {
			return view{kind: viewNull}, true
		}
		switch u.(type) {
		case map[string]interface{}, []interface{}:
			return view{kind: viewUnstructured, u: u}, true
		}
		return scalarOf(reflect.ValueOf(u))
	}
	if k := v.Kind(); k == reflect.Ptr || k == reflect.Interface {
		if v.IsNil() {
			return view{kind: viewNull}, true
		}
		v = v.Elem()
	}
	switch p.kind {
	case kindStruct:
		return view{kind: viewStruct, v: v}, true
	case kindMap:
		if v.IsNil() {
			return view{kind: viewNull}, true
		}
		return view{kind: viewMap, v: v}, true
	case kindList:
		if v.IsNil() {
			return view{kind: viewNull}, true
		}
		return view{kind: viewList, v: v}, true
	case kindBytes:
		if v.IsNil() {
			return view{kind: viewNull}, true
		}
		return view{kind: viewScalar, sk: scalarString, s: base64.StdEncoding.EncodeToString(v.Bytes())}, true
	case kindInt:
		return view{kind: viewScalar, sk: scalarInt, i: v.Int()}, true
	case kindUint:
		return view{kind: viewScalar, sk: scalarInt, i: int64(v.Uint())}, true
	case kindFloat:
		return view{kind: viewScalar, sk: scalarFloat, f: v.Float()}, true
	case kindString:
		return view{kind: viewScalar, sk: scalarString, s: v.String()}, true
	case kindBool:
		return view{kind: viewScalar, sk: scalarBool, b: v.Bool()}, true
	}
	return view{}, false
}

// scalarOf is the view of what a type's own conversion returned; only
// scalars are handled here.
func scalarOf(v reflect.Value) (view, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return view{kind: viewScalar, sk: scalarInt, i: v.Int()}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return view{kind: viewScalar, sk: scalarInt, i: int64(v.Uint())}, true
	case reflect.Float32, reflect.Float64:
		return view{kind: viewScalar, sk: scalarFloat, f: v.Float()}, true
	case reflect.String:
		return view{kind: viewScalar, sk: scalarString, s: v.String()}, true
	case reflect.Bool:
		return view{kind: viewScalar, sk: scalarBool, b: v.Bool()}, true
	}
	return view{}, false
}

// value is the scalar as an SMD value (for list keys and set items).
func (w view) value() value.Value {
	switch w.sk {
	case scalarInt:
		return value.NewValueInterface(w.i)
	case scalarFloat:
		return value.NewValueInterface(w.f)
	case scalarString:
		return value.NewValueInterface(w.s)
	}
	return value.NewValueInterface(w.b)
}

// scalarValid is validateScalar.
func scalarValid(t schema.Scalar, w view) bool {
	switch t {
	case schema.Numeric:
		return w.sk == scalarInt || w.sk == scalarFloat
	case schema.String:
		return w.sk == scalarString
	case schema.Boolean:
		return w.sk == scalarBool
	case schema.Untyped:
		return true
	}
	return false
}

// scalarEqual is value.Equals of two values each null or a scalar.
func scalarEqual(l, r view) bool {
	if l.kind == viewNull || r.kind == viewNull {
		return l.kind == r.kind
	}
	if l.sk == scalarFloat || r.sk == scalarFloat {
		lf, lok := asFloat(l)
		rf, rok := asFloat(r)
		return lok && rok && lf == rf
	}
	if l.sk != r.sk {
		return false
	}
	switch l.sk {
	case scalarInt:
		return l.i == r.i
	case scalarString:
		return l.s == r.s
	}
	return l.b == r.b
}

func asFloat(w view) (float64, bool) {
	switch w.sk {
	case scalarFloat:
		return w.f, true
	case scalarInt:
		return float64(w.i), true
	}
	return 0, false
}

// walker holds the path being walked, one frame per element, each with
// the set of its children in the set being built, made only when
// something is inserted below it, so that no empty node is left in the
// set. The first frame is the root, with the whole set.
type walker struct {
	stack []frame
}

type frame struct {
	pe  fieldpath.PathElement
	set *fieldpath.Set
}

func newWalker(set *fieldpath.Set) *walker {
	w := &walker{stack: make([]frame, 1, 16)}
	w.stack[0].set = set
	return w
}

func (c *walker) push(pe fieldpath.PathElement) { c.stack = append(c.stack, frame{pe: pe}) }

func (c *walker) pop() { c.stack = c.stack[:len(c.stack)-1] }

// children is the set of the children of the current path.
func (c *walker) children() *fieldpath.Set { return c.childrenAt(len(c.stack) - 1) }

func (c *walker) childrenAt(i int) *fieldpath.Set {
	if c.stack[i].set == nil {
		c.stack[i].set = c.childrenAt(i - 1).Children.Descend(c.stack[i].pe)
	}
	return c.stack[i].set
}

// insert records the current path (the root is never recorded, as
// fieldpath.Set.Insert does not).
func (c *walker) insert() {
	if n := len(c.stack) - 1; n > 0 {
		c.childrenAt(n - 1).Members.Insert(c.stack[n].pe)
	}
}

// added is compare with no live value: everything in v is added, and a
// granular non-empty map or list gets its own entry too (the "." of
// FieldsV1).
func (c *walker) added(p *plan, v reflect.Value) bool {
	w, ok := p.see(v)
	if !ok {
		return false
	}
	switch w.kind {
	case viewNull:
		c.insert()
		return true
	case viewScalar:
		if p.atom.Scalar == nil || !scalarValid(*p.atom.Scalar, w) {
			return false
		}
		c.insert()
		return true
	case viewStruct, viewMap:
		if p.atom.Map == nil {
			return false
		}
		c.insert() // as a whole (atomic or empty), or its own "." entry
		if p.atom.Map.ElementRelationship == schema.Atomic {
			return validateView(p, w)
		}
		// An empty map is a leaf: the insert above is all it records.
		return c.addEntries(p, w)
	case viewList:
		l := p.atom.List
		if l == nil {
			return false
		}
		if l.ElementRelationship == schema.Atomic || w.v.Len() == 0 {
			c.insert()
			return validateView(p, w)
		}
		if !c.items(p, w) {
			return false
		}
		c.insert()
		return true
	case viewUnstructured:
		if !c.graftUnstructured(p, w) {
			return false
		}
		c.insert()
		return true
	}
	return false
}

// compare is compareWalker.compare with a live value lv (of the empty
// object) and the new value rv, both present.
func (c *walker) compare(p *plan, lv, rv reflect.Value) bool {
	l, ok := p.see(lv)
	if !ok {
		return false
	}
	r, ok := p.see(rv)
	if !ok {
		return false
	}
	if p.multi {
		if l.kind != viewNull {
			return false
		}
		// The atom deduced from the new value differs from the live
		// null's: SMD handles both, and the live one's first kind, when
		// not the new value's, sees no value and records a change.
		if r.kind != viewNull && firstKind(p.atom) != atomKind(r) {
			c.insert()
		}
	}
	switch r.kind {
	case viewNull:
		return l.kind == viewNull
	case viewScalar:
		if p.atom.Scalar == nil || !scalarValid(*p.atom.Scalar, r) || (l.kind != viewNull && l.kind != viewScalar) {
			return false
		}
		if !scalarEqual(l, r) {
			c.insert()
		}
		return true
	case viewStruct, viewMap:
		return c.compareMaps(p, l, r)
	case viewList:
		return c.compareLists(p, l, r)
	case viewUnstructured:
		if l.kind != viewNull || !c.graftUnstructured(p, r) {
			return false
		}
		if unstructuredLeaf(p, r) {
			c.insert() // null against a map or list
		}
		return true
	}
	return false
}

type atomPart uint8

const (
	partMap atomPart = iota
	partScalar
	partList
)

// firstKind is the part of a that handleAtom takes: map, else scalar,
// else list.
func firstKind(a schema.Atom) atomPart {
	switch {
	case a.Map != nil:
		return partMap
	case a.Scalar != nil:
		return partScalar
	}
	return partList
}

// atomKind is the part of an atom that deduceAtom picks for w.
func atomKind(w view) atomPart {
	switch w.kind {
	case viewScalar:
		return partScalar
	case viewList:
		return partList
	case viewUnstructured:
		if _, ok := w.u.([]interface{}); ok {
			return partList
		}
	}
	return partMap
}

// graftUnstructured has SMD type and compare, against null, the map or
// list a type's own conversion returned, and records under c what SMD
// finds added or modified below it.
func (c *walker) graftUnstructured(p *plan, w view) bool {
	rhs, err := typed.AsTyped(value.NewValueInterface(w.u), p.schema, p.typeRef, typed.AllowDuplicates)
	if err != nil {
		return false
	}
	lhs := typed.AsTypedUnvalidated(value.NewValueInterface(nil), p.schema, p.typeRef)
	cmp, err := lhs.Compare(rhs)
	if err != nil {
		return false
	}
	below := cmp.Added.Union(cmp.Modified)
	if !below.Empty() {
		set := c.children()
		*set = *set.Union(below)
	}
	return true
}

// unstructuredLeaf tells whether SMD compares the converted map or list as
// a whole: atomic, or empty.
func unstructuredLeaf(p *plan, w view) bool {
	switch u := w.u.(type) {
	case map[string]interface{}:
		return p.atom.Map != nil && (p.atom.Map.ElementRelationship == schema.Atomic || len(u) == 0)
	case []interface{}:
		return p.atom.List != nil && (p.atom.List.ElementRelationship == schema.Atomic || len(u) == 0)
	}
	return false
}

func (c *walker) compareMaps(p *plan, l, r view) bool {
	if p.atom.Map == nil {
		return false
	}
	switch l.kind {
	case viewNull, viewStruct, viewMap:
	default:
		return false
	}
	if p.atom.Map.ElementRelationship == schema.Atomic {
		return c.compareAtomicMaps(p, l, r)
	}
	switch {
	case l.kind == viewNull:
		if mapEmpty(p, r) {
			c.insert() // null against an empty map: not equal
			return true
		}
		return c.addEntries(p, r)
	case l.kind == viewStruct && r.kind == viewStruct:
		// Two empty structs compare as equal leaves: nothing, as here.
		for _, fp := range p.fields {
			lf, rf := fp.get(l.v), fp.get(r.v)
			lOmit, rOmit := fp.entry.CanOmit(lf), fp.entry.CanOmit(rf)
			if rOmit {
				continue // removed or absent from both: not the creator's
			}
			if fp.plan == nil {
				return false // not declared in the schema
			}
			c.push(fieldpath.PathElement{FieldName: fp.name})
			var ok bool
			if lOmit {
				ok = c.added(fp.plan, rf)
			} else {
				ok = c.compare(fp.plan, lf, rf)
			}
			c.pop()
			if !ok {
				return false
			}
		}
		return true
	case !mapEmpty(p, l):
		return false // the empty object has no entries
	}
	// An empty map against a map: its entries are added (none if empty,
	// as equal empty leaves add nothing).
	return c.addEntries(p, r)
}

// compareAtomicMaps compares atomic maps as a whole, as doLeaf.
func (c *walker) compareAtomicMaps(p *plan, l, r view) bool {
	lEmpty := l.kind == viewNull || mapEmpty(p, l)
	rEmpty := mapEmpty(p, r)
	switch {
	case l.kind == viewNull || !rEmpty && lEmpty:
		c.insert() // null or empty against a map that is not
	case !lEmpty:
		// Both structs, in place: SMD's own equality on the same values.
		if l.kind != viewStruct || r.kind != viewStruct || !l.v.CanAddr() || !r.v.CanAddr() {
			return false
		}
		lv, err := value.NewValueReflect(l.v.Addr().Interface())
		if err != nil {
			return false
		}
		rv, err := value.NewValueReflect(r.v.Addr().Interface())
		if err != nil {
			return false
		}
		if !value.Equals(rv, lv) {
			c.insert()
		}
	}
	return validateView(p, r)
}

func (c *walker) compareLists(p *plan, l, r view) bool {
	list := p.atom.List
	if list == nil {
		return false
	}
	switch {
	case l.kind == viewList && l.v.Len() > 0:
		return false // the empty object has no items
	case l.kind != viewNull && l.kind != viewList:
		return false
	}
	if list.ElementRelationship == schema.Atomic || r.v.Len() == 0 {
		if l.kind == viewNull || r.v.Len() > 0 {
			c.insert()
		}
		return validateView(p, r)
	}
	return c.items(p, r)
}

// mapEmpty is Map.Empty: no field present (not omitted), or no entry.
func mapEmpty(p *plan, w view) bool {
	if w.kind == viewMap {
		return w.v.Len() == 0
	}
	for _, fp := range p.fields {
		if !fp.entry.CanOmit(fp.get(w.v)) {
			return false
		}
	}
	return true
}

// addEntries adds each present field or entry of a map view; it fails on
// one the schema does not declare.
func (c *walker) addEntries(p *plan, w view) bool {
	return eachEntry(p, w, func(fp *plan, name *string, fv reflect.Value) bool {
		c.push(fieldpath.PathElement{FieldName: name})
		ok := c.added(fp, fv)
		c.pop()
		return ok
	})
}

// eachEntry calls fn with each present field or entry of a map view, and
// its plan; it fails on one the schema does not declare.
func eachEntry(p *plan, w view, fn func(*plan, *string, reflect.Value) bool) bool {
	if w.kind == viewStruct {
		for _, fp := range p.fields {
			fv := fp.get(w.v)
			if fp.entry.CanOmit(fv) {
				continue
			}
			if fp.plan == nil || !fn(fp.plan, fp.name, fv) {
				return false
			}
		}
		return true
	}
	if p.elem == nil {
		return w.v.Len() == 0
	}
	iter := w.v.MapRange()
	for iter.Next() {
		name := iter.Key().String()
		if !fn(p.elem, &name, iter.Value()) {
			return false
		}
	}
	return true
}

// items walks the items of an associative list none of which the live
// object has (visitListItems with no lhs): each is added, but an item
// whose key repeats is added as a whole, once, without its fields.
func (c *walker) items(p *plan, w view) bool {
	if p.atom.List.ElementRelationship != schema.Associative {
		return false
	}
	n := w.v.Len()
	pes := make([]fieldpath.PathElement, n)
	for i := 0; i < n; i++ {
		pe, ok := itemPathElement(p, w.v.Index(i))
		if !ok {
			return false
		}
		pes[i] = pe
	}
	dup := duplicates(pes)
	for i := 0; i < n; i++ {
		item := w.v.Index(i)
		if dup != nil && dup[i] {
			if !validate(p.elem, item) {
				return false
			}
			c.children().Members.Insert(pes[i])
			continue
		}
		c.push(pes[i])
		ok := c.added(p.elem, item)
		c.pop()
		if !ok {
			return false
		}
	}
	return true
}

// duplicates marks the items whose path element another item has too
// (nil when there are none).
func duplicates(pes []fieldpath.PathElement) []bool {
	var dup []bool
	mark := func(i, j int) {
		if dup == nil {
			dup = make([]bool, len(pes))
		}
		dup[i], dup[j] = true, true
	}
	if len(pes) <= 16 {
		for i := range pes {
			for j := i + 1; j < len(pes); j++ {
				if pes[i].Equals(pes[j]) {
					mark(i, j)
				}
			}
		}
		return dup
	}
	first := fieldpath.MakePathElementMap(len(pes))
	for i, pe := range pes {
		if j, ok := first.Get(pe); ok {
			mark(j.(int), i)
			continue
		}
		first.Insert(pe, i)
	}
	return dup
}

// itemPathElement is listItemToPathElement: the item's keys, sorted by
// name, each its value or else its schema default; or the item itself in
// a set.
func itemPathElement(p *plan, item reflect.Value) (fieldpath.PathElement, bool) {
	w, ok := p.elem.see(item)
	if !ok {
		return fieldpath.PathElement{}, false
	}
	if len(p.atom.List.Keys) == 0 {
		if w.kind != viewScalar {
			return fieldpath.PathElement{}, false
		}
		v := w.value()
		return fieldpath.PathElement{Value: &v}, true
	}
	if w.kind != viewStruct || p.keys == nil {
		return fieldpath.PathElement{}, false
	}
	keys := make(value.FieldList, 0, len(p.keys))
	for i, name := range p.keys {
		fp := p.elem.byName[name]
		var kv value.Value
		if fp != nil {
			fv := fp.get(w.v)
			if !fp.entry.CanOmit(fv) {
				if fp.plan == nil {
					return fieldpath.PathElement{}, false
				}
				k, ok := fp.plan.see(fv)
				if !ok || k.kind != viewScalar || k.sk == scalarFloat {
					return fieldpath.PathElement{}, false
				}
				kv = k.value()
			}
		}
		if kv == nil {
			def := p.keyDefaults[i]
			if def == nil {
				return fieldpath.PathElement{}, false
			}
			kv = value.NewValueInterface(def)
		}
		keys = append(keys, value.Field{Name: name, Value: kv})
	}
	return fieldpath.PathElement{Key: &keys}, true
}

// validate is the validating walker of ObjectToTyped on one value.
func validate(p *plan, v reflect.Value) bool {
	w, ok := p.see(v)
	return ok && validateView(p, w)
}

func validateView(p *plan, w view) bool {
	switch w.kind {
	case viewNull:
		return true
	case viewScalar:
		return p.atom.Scalar != nil && scalarValid(*p.atom.Scalar, w)
	case viewStruct, viewMap:
		return p.atom.Map != nil && eachEntry(p, w, func(fp *plan, _ *string, fv reflect.Value) bool {
			return validate(fp, fv)
		})
	case viewList:
		if p.atom.List == nil {
			return false
		}
		associative := p.atom.List.ElementRelationship == schema.Associative
		for i := 0; i < w.v.Len(); i++ {
			item := w.v.Index(i)
			if associative {
				if _, ok := itemPathElement(p, item); !ok {
					return false
				}
			}
			if !validate(p.elem, item) {
				return false
			}
		}
		return true
	case viewUnstructured:
		_, err := typed.AsTyped(value.NewValueInterface(w.u), p.schema, p.typeRef, typed.AllowDuplicates)
		return err == nil
	}
	return false
}
