package fastpath

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// A create's object handed to the watch cache (cacher.CreateHandedOver):
// the cache keeps the object the create wrote, made to look as its
// decoding would, instead of decoding the bytes etcd's watch brings back,
// and the create answers a protobuf client with the bytes it wrote, the
// resourceVersion put in (AppendWithResourceVersion), instead of encoding
// the object again. Removing it cost 7% of the CPU per protobuf create and
// 6% per JSON create end to end (docs/benchmarks.md, "Fast paths").

// DecodingDefaults reports whether decoding an object of gv applies
// defaults: whether the scheme holds defaulting functions for gv's kinds.
// Of the groups skiff serves only apiextensions.k8s.io/v1 and
// apiregistration.k8s.io/v1 register any (their AddToScheme does);
// k8s.io/api's groups leave defaulting to the server, which defaults an
// object before it stores it. AsDecoded does not default, so the watch
// cache keeps no object of these groups (TestDecodingDefaults checks the
// list against every kind the server stores).
func DecodingDefaults(gv schema.GroupVersion) bool {
	return gv == apiextensionsv1.SchemeGroupVersion || gv == apiregistrationv1.SchemeGroupVersion
}

// AsDecoded makes obj, an object of a built-in type, look as its decoding
// from the protobuf storage encoding does, wherever the API shows the two
// differently:
//
//   - an empty slice or map in a field whose JSON name has no omitempty
//     is written as [] or {}, but protobuf has no empty list and decodes it
//     as nil, written as null: such fields become nil;
//   - a nil slice as a map's value (a Secret's data, a CSR's extra) is
//     written as null, but protobuf writes the entry and decodes it as an
//     empty slice: such values become empty;
//   - a field protobuf does not carry (the TypeMeta of an object embedded
//     in another, as a StatefulSet's volumeClaimTemplates) is dropped by the
//     decoding: such fields become zero.
//
// It goes through pointers, slices and maps of structs, and changes
// nothing else. The encodings of obj, protobuf and JSON, are then those of
// its decoding (times are encoded to the second either way, quantities in
// their canonical form). TestAsDecodedIsTheRoundTrip checks this on every
// built-in kind. Its protobuf encoding changes only where a map's nil value
// became empty (protobuf writes such an entry without its value, and an
// empty one with it); AsDecoded reports whether it made any such change.
func AsDecoded(obj runtime.Object) (filled bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	if p := decodedPlanFor(v.Elem().Type()); p != nil {
		return p.apply(v.Elem(), true)
	}
	return false
}

// plan lists, for a struct type, the fields AsDecoded must look at: those
// it changes and those that lead to some. It is nil for a type with none.
type decodedPlan struct {
	fields []decodedField
}

type decodedField struct {
	index int
	// nilEmpty: a slice or map without omitempty.
	nilEmpty bool
	// fillMapValues: a map whose values are slices.
	fillMapValues bool
	// drop: a field protobuf does not carry; topLevelOK: unless it is the
	// TypeMeta of the object itself, which the decoder sets.
	drop, topLevelOK bool
	// elem is the plan of the struct the field leads to (through a pointer,
	// or as the element of a slice, an array or a map); nil if none.
	elem *decodedPlan
}

var (
	// decodedMade holds the plans of the types asked for, read without a lock.
	decodedMade sync.Map // reflect.Type -> *plan
	// decodedPlans holds every plan built, under decodedPlansMu.
	decodedPlansMu sync.Mutex
	decodedPlans   = map[reflect.Type]*decodedPlan{}
)

// decodedPlanFor returns t's plan, made once per type.
func decodedPlanFor(t reflect.Type) *decodedPlan {
	if p, ok := decodedMade.Load(t); ok {
		return p.(*decodedPlan)
	}
	decodedPlansMu.Lock()
	defer decodedPlansMu.Unlock()
	p := buildDecodedPlan(t, map[reflect.Type]*decodedPlan{})
	decodedMade.Store(t, p)
	return p
}

const typeMetaName = "TypeMeta"

// buildDecodedPlan makes t's plan; building holds the plans of the types being
// built, so that a recursive type refers to its own plan.
func buildDecodedPlan(t reflect.Type, building map[reflect.Type]*decodedPlan) *decodedPlan {
	if p, ok := decodedPlans[t]; ok {
		return p
	}
	if p, ok := building[t]; ok {
		return p
	}
	p := &decodedPlan{}
	building[t] = p
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jsonTag := f.Tag.Get("json")
		if !f.IsExported() || jsonTag == "-" {
			continue
		}
		pf := decodedField{index: i}
		ft := f.Type
		if _, carried := f.Tag.Lookup("protobuf"); !carried {
			pf.drop = true
			pf.topLevelOK = f.Anonymous && f.Name == typeMetaName
			p.fields = append(p.fields, pf)
			continue
		}
		isBytes := ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8
		if (ft.Kind() == reflect.Slice && !isBytes || ft.Kind() == reflect.Map) && !strings.Contains(jsonTag, ",omitempty") {
			pf.nilEmpty = true
		}
		if ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Slice {
			pf.fillMapValues = true
		}
		if st := structBehind(ft); st != nil {
			pf.elem = buildDecodedPlan(st, building)
		}
		if pf.nilEmpty || pf.fillMapValues || pf.elem != nil {
			p.fields = append(p.fields, pf)
		}
	}
	delete(building, t)
	// A type that refers to itself has the field that does so in its plan,
	// so a plan left without fields was referred to by nobody.
	if len(p.fields) == 0 {
		p = nil
	}
	decodedPlans[t] = p
	return p
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// structBehind is the struct type a field of type t holds or points to,
// directly or as the element of a slice, an array or a map; nil otherwise.
// Types that write their own JSON (times, quantities, raw extensions) are
// leaves: both encodings of them are their own.
func structBehind(t reflect.Type) reflect.Type {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
			continue
		case reflect.Struct:
			if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
				return nil
			}
			return t
		}
		return nil
	}
}

// apply applies p to the struct v; top: v is the object itself.
func (p *decodedPlan) apply(v reflect.Value, top bool) (filled bool) {
	for _, f := range p.fields {
		fv := v.Field(f.index)
		switch {
		case f.drop:
			if !(top && f.topLevelOK) && !fv.IsZero() {
				fv.SetZero()
			}
			continue
		case f.nilEmpty && fv.Len() == 0:
			if !fv.IsNil() {
				fv.SetZero()
			}
			continue
		case f.fillMapValues:
			for it := fv.MapRange(); it.Next(); {
				if it.Value().IsNil() {
					fv.SetMapIndex(it.Key(), reflect.MakeSlice(it.Value().Type(), 0, 0))
					filled = true
				}
			}
		}
		if f.elem != nil && f.elem.applyIn(fv) {
			filled = true
		}
	}
	return filled
}

// applyIn applies p to the structs v holds or points to.
func (p *decodedPlan) applyIn(v reflect.Value) (filled bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return p.applyIn(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if p.applyIn(v.Index(i)) {
				filled = true
			}
		}
	case reflect.Map:
		// A map's values cannot be changed in place: copy, change, store.
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(it.Value().Type()).Elem()
			e.Set(it.Value())
			if p.applyIn(e) {
				filled = true
			}
			v.SetMapIndex(it.Key(), e)
		}
	case reflect.Struct:
		return p.apply(v, false)
	}
	return filled
}
