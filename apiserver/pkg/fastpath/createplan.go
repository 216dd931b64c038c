package fastpath

import (
	"reflect"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v4/schema"
	"sigs.k8s.io/structured-merge-diff/v4/value"
)

// A plan says how structured-merge-diff sees the values of one Go type
// under one schema type: which atom the schema resolves to, and how the
// value reflects (converted through its own marshaling, dereferenced,
// struct fields by JSON name, map entries, list items and their keys). It
// is built once per (Go type, schema type) and mirrors SMD's value
// package (reflectcache.go, valuereflect.go, structreflect.go). A plan
// that cannot be mirrored exactly is bad: walking a value through it
// makes the create take the general path.
type plan struct {
	bad bool
	// atom is the resolved schema type; multi when it has more than one of
	// map, scalar and list (SMD then deduces the kind from the value).
	atom  schema.Atom
	multi bool
	// conv: the Go type converts itself to unstructured (json.Marshaler,
	// value.UnstructuredConverter), as metav1.Time or resource.Quantity.
	conv  bool
	entry *value.TypeReflectCacheEntry
	// schema and typeRef type what a conversion returns that is not a
	// scalar (a map or list, as from runtime.RawExtension), which SMD
	// itself then compares.
	schema  *schema.Schema
	typeRef schema.TypeRef

	kind goKind
	// fields of a struct in SMD's order (by JSON name), byName for keys.
	fields []*fieldPlan
	byName map[string]*fieldPlan
	// elem: the plan of a Go map's values (nil: no schema type for them)
	// or of a list's items.
	elem *plan
	// keys of an associative list of maps, sorted by name as SMD sorts
	// them, with their schema defaults (nil when none).
	keys        []string
	keyDefaults []interface{}
}

type goKind uint8

const (
	kindBad goKind = iota
	kindStruct
	kindMap
	kindList
	kindBytes
	kindInt
	kindUint
	kindFloat
	kindString
	kindBool
)

// fieldPlan is one JSON field of a struct. plan is nil when the schema
// declares no such field (SMD's validation rejects it when present).
type fieldPlan struct {
	name  *string
	entry *value.FieldCacheEntry
	plan  *plan
	// index is the field's index in the struct when SMD's field path is
	// that field alone (not through an inlined struct), else -1.
	index int
}

// get is the field's value in struct v, as entry.GetFrom.
func (fp *fieldPlan) get(v reflect.Value) reflect.Value {
	if fp.index >= 0 {
		return v.Field(fp.index)
	}
	return fp.entry.GetFrom(v)
}

type planKey struct {
	t    reflect.Type
	name string
	rel  string
}

// planner builds plans over one schema, sharing the plans of named types
// (which also ends recursion through recursive types).
type planner struct {
	schema *schema.Schema
	named  map[planKey]*plan
}

func newPlanner(s *schema.Schema) *planner {
	return &planner{schema: s, named: map[planKey]*plan{}}
}

func (b *planner) plan(t reflect.Type, tr schema.TypeRef) *plan {
	var key planKey
	if tr.NamedType != nil {
		key = planKey{t: t, name: *tr.NamedType}
		if tr.ElementRelationship != nil {
			key.rel = string(*tr.ElementRelationship)
		}
		if p, ok := b.named[key]; ok {
			return p
		}
	}
	p := &plan{}
	if tr.NamedType != nil {
		b.named[key] = p
	}
	atom, ok := b.schema.Resolve(tr)
	n := 0
	for _, has := range []bool{atom.Map != nil, atom.Scalar != nil, atom.List != nil} {
		if has {
			n++
		}
	}
	if !ok || n == 0 {
		p.bad = true
		return p
	}
	p.atom, p.multi = atom, n > 1
	p.entry = value.TypeReflectEntryOf(t)
	if p.entry.CanConvertToUnstructured() {
		p.conv, p.schema, p.typeRef = true, b.schema, tr
		return p
	}
	et := t
	if et.Kind() == reflect.Ptr {
		et = et.Elem()
	}
	b.fill(p, et)
	if p.kind == kindBad {
		p.bad = true
	}
	return p
}

// fill sets the kind of p from the (dereferenced) Go type et, and its
// fields or element plans.
func (b *planner) fill(p *plan, et reflect.Type) {
	switch et.Kind() {
	case reflect.Struct:
		if p.atom.Map != nil {
			b.fillStruct(p, et)
		}
	case reflect.Map:
		m := p.atom.Map
		if m == nil || et.Key().Kind() != reflect.String || len(m.Fields) > 0 {
			return
		}
		p.kind = kindMap
		if m.ElementType != (schema.TypeRef{}) {
			p.elem = b.plan(et.Elem(), m.ElementType)
		}
	case reflect.Slice:
		if et.Elem().Kind() == reflect.Uint8 {
			p.kind = kindBytes
			return
		}
		if p.atom.List != nil {
			b.fillList(p, et)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		p.kind = kindUint
	case reflect.Float32, reflect.Float64:
		p.kind = kindFloat
	case reflect.String:
		p.kind = kindString
	case reflect.Bool:
		p.kind = kindBool
	}
}

func (b *planner) fillStruct(p *plan, et reflect.Type) {
	zero := reflect.New(et).Elem()
	m := p.atom.Map
	p.byName = map[string]*fieldPlan{}
	for _, fe := range value.TypeReflectEntryOf(et).OrderedFields() {
		ft, ok := fieldType(fe, zero)
		if !ok {
			return // an inlined pointer: SMD cannot read it either
		}
		name := fe.JsonName
		fp := &fieldPlan{name: &name, entry: fe, index: directIndex(fe, zero)}
		if sf, ok := m.FindField(name); ok {
			fp.plan = b.plan(ft, sf.Type)
		} else if m.ElementType != (schema.TypeRef{}) {
			fp.plan = b.plan(ft, m.ElementType)
		}
		p.fields = append(p.fields, fp)
		p.byName[name] = fp
	}
	p.kind = kindStruct
}

// fieldType is the Go type of a struct field, read through SMD's own
// field path (which may pass through inlined structs).
func fieldType(fe *value.FieldCacheEntry, zero reflect.Value) (t reflect.Type, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return fe.GetFrom(zero).Type(), true
}

// directIndex is the index of the struct's own field that SMD's field
// entry reads (the same type at the same address), or -1 when it reads
// one of an inlined struct.
func directIndex(fe *value.FieldCacheEntry, zero reflect.Value) int {
	fv := fe.GetFrom(zero)
	for i := 0; i < zero.NumField(); i++ {
		f := zero.Field(i)
		if f.Type() == fv.Type() && f.UnsafeAddr() == fv.UnsafeAddr() && f.Type().Size() > 0 {
			return i
		}
	}
	return -1
}

func (b *planner) fillList(p *plan, et reflect.Type) {
	l := p.atom.List
	if l.ElementRelationship != schema.Atomic && l.ElementRelationship != schema.Associative {
		return
	}
	p.elem = b.plan(et.Elem(), l.ElementType)
	if len(l.Keys) > 0 {
		elemAtom, ok := b.schema.Resolve(l.ElementType)
		if !ok || elemAtom.Map == nil {
			return
		}
		p.keys = append([]string(nil), l.Keys...)
		sort.Strings(p.keys)
		for _, k := range p.keys {
			f, _ := elemAtom.Map.FindField(k)
			p.keyDefaults = append(p.keyDefaults, f.Default)
		}
	}
	p.kind = kindList
}
