package library

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Lists is the Kubernetes list library.
//
//	<list<T>>.isSorted() <bool>   T comparable: int, uint, double, bool, duration, timestamp, string, bytes
//	<list<T>>.sum() <T>           T summable: int, uint, double, duration; an empty list sums to T's zero
//	<list<T>>.min() <T>           T comparable; error "min called on empty list" on an empty list
//	<list<T>>.max() <T>           T comparable; error "max called on empty list" on an empty list
//	<list<T>>.indexOf(<T>) <int>      first index of an equal element; -1 if none
//	<list<T>>.lastIndexOf(<T>) <int>  last index of an equal element; -1 if none
//
// Examples:
//
//	[1, 2, 3].isSorted() // true
//	[1, 3].sum() // 4
//	[duration('1m'), duration('1s')].sum() // duration('61s')
//	[1, 3].max() // 3
//	[].min() // error
//	['a', 'b', 'b', 'c'].lastIndexOf('b') // 2
func Lists() cel.EnvOption {
	return cel.Lib(listsLib{})
}

type listsLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (listsLib) LibraryName() string { return "kubernetes.lists" }

// namedType is an element type of the templated overloads, with the name
// used in their overload ids.
type namedType struct {
	name string
	typ  *cel.Type
	zero ref.Val // the empty sum; only for summable types
}

// summableTypes are the element types of sum, in Kubernetes' order.
func summableTypes() []namedType {
	return []namedType{
		{"int", cel.IntType, types.Int(0)},
		{"uint", cel.UintType, types.Uint(0)},
		{"double", cel.DoubleType, types.Double(0)},
		{"duration", cel.DurationType, types.Duration{}},
	}
}

// comparableTypes are the element types of isSorted, min and max, in
// Kubernetes' order.
func comparableTypes() []namedType {
	return []namedType{
		{name: "int", typ: cel.IntType},
		{name: "uint", typ: cel.UintType},
		{name: "double", typ: cel.DoubleType},
		{name: "bool", typ: cel.BoolType},
		{name: "duration", typ: cel.DurationType},
		{name: "timestamp", typ: cel.TimestampType},
		{name: "string", typ: cel.StringType},
		{name: "bytes", typ: cel.BytesType},
	}
}

// CompileOptions declares the list functions. The overload ids are
// Kubernetes' ones.
func (listsLib) CompileOptions() []cel.EnvOption {
	paramA := cel.TypeParamType("A")
	decls := map[string][]cel.FunctionOpt{
		"indexOf": {cel.MemberOverload("list_a_index_of_int", []*cel.Type{cel.ListType(paramA), paramA},
			cel.IntType, cel.BinaryBinding(indexOf))},
		"lastIndexOf": {cel.MemberOverload("list_a_last_index_of_int", []*cel.Type{cel.ListType(paramA), paramA},
			cel.IntType, cel.BinaryBinding(lastIndexOf))},
	}
	for _, t := range comparableTypes() {
		list := []*cel.Type{cel.ListType(t.typ)}
		decls["isSorted"] = append(decls["isSorted"], cel.MemberOverload(
			fmt.Sprintf("list_%s_is_sorted_bool", t.name), list, cel.BoolType, cel.UnaryBinding(isSorted)))
		decls["max"] = append(decls["max"], cel.MemberOverload(
			fmt.Sprintf("list_%s_max_%s", t.name, t.name), list, t.typ, cel.UnaryBinding(extremum("max", types.IntNegOne))))
		decls["min"] = append(decls["min"], cel.MemberOverload(
			fmt.Sprintf("list_%s_min_%s", t.name, t.name), list, t.typ, cel.UnaryBinding(extremum("min", types.IntOne))))
	}
	for _, t := range summableTypes() {
		decls["sum"] = append(decls["sum"], cel.MemberOverload(
			fmt.Sprintf("list_%s_sum_%s", t.name, t.name), []*cel.Type{cel.ListType(t.typ)}, t.typ,
			cel.UnaryBinding(sum(t.zero))))
	}
	return functionOptions(decls)
}

// ProgramOptions returns nothing: the library needs no program option.
func (listsLib) ProgramOptions() []cel.ProgramOption { return nil }

// each calls f with every element of the list val until f returns a
// non-nil value, and returns that value; nil if f never did.
func each(val ref.Val, f func(ref.Val) ref.Val) ref.Val {
	iterable, ok := val.(traits.Iterable)
	if !ok {
		return types.MaybeNoSuchOverloadErr(val)
	}
	for it := iterable.Iterator(); it.HasNext() == types.True; {
		if r := f(it.Next()); r != nil {
			return r
		}
	}
	return nil
}

// compare compares a with b; an error value if they do not compare.
func compare(a, b ref.Val) ref.Val {
	cmp, ok := a.(traits.Comparer)
	if !ok {
		return types.MaybeNoSuchOverloadErr(a)
	}
	return cmp.Compare(b)
}

func isSorted(val ref.Val) ref.Val {
	var prev ref.Val
	r := each(val, func(next ref.Val) ref.Val {
		if prev != nil {
			c := compare(prev, next)
			if types.IsError(c) {
				return c
			}
			if c == types.IntOne {
				return types.False
			}
		}
		prev = next
		return nil
	})
	if r != nil {
		return r
	}
	return types.True
}

// sum adds the elements of a list; an empty list sums to zero.
func sum(zero ref.Val) func(ref.Val) ref.Val {
	return func(val ref.Val) ref.Val {
		var acc ref.Val
		r := each(val, func(next ref.Val) ref.Val {
			if acc == nil {
				acc = next
				return nil
			}
			adder, ok := acc.(traits.Adder)
			if !ok {
				return types.MaybeNoSuchOverloadErr(acc)
			}
			acc = adder.Add(next)
			if types.IsError(acc) {
				return acc
			}
			return nil
		})
		switch {
		case r != nil:
			return r
		case acc == nil:
			return zero
		}
		return acc
	}
}

// extremum returns the function behind min or max. It walks the list and
// replaces its current pick with an element when comparing the pick with
// the element gives preferOther: 1 for min (the pick is greater), -1 for
// max. Of equal elements the first wins.
func extremum(name string, preferOther ref.Val) func(ref.Val) ref.Val {
	return func(val ref.Val) ref.Val {
		var result ref.Val
		r := each(val, func(next ref.Val) ref.Val {
			if result == nil {
				result = next
				return nil
			}
			c := compare(result, next)
			if types.IsError(c) {
				return c
			}
			if c == preferOther {
				result = next
			}
			return nil
		})
		switch {
		case r != nil:
			return r
		case result == nil:
			return types.NewErr("%s called on empty list", name)
		}
		return result
	}
}

func indexOf(list, item ref.Val) ref.Val {
	lister, size, errVal := sizedLister(list)
	if errVal != nil {
		return errVal
	}
	for i := types.Int(0); i < size; i++ {
		if lister.Get(i).Equal(item) == types.True {
			return i
		}
	}
	return types.Int(-1)
}

func lastIndexOf(list, item ref.Val) ref.Val {
	lister, size, errVal := sizedLister(list)
	if errVal != nil {
		return errVal
	}
	for i := size - 1; i >= 0; i-- {
		if lister.Get(i).Equal(item) == types.True {
			return i
		}
	}
	return types.Int(-1)
}

// sizedLister is list as a lister and its size, or the no-such-overload
// error indexOf and lastIndexOf answer for anything else.
func sizedLister(list ref.Val) (traits.Lister, types.Int, ref.Val) {
	lister, ok := list.(traits.Lister)
	if !ok {
		return nil, 0, types.MaybeNoSuchOverloadErr(list)
	}
	size, ok := lister.Size().(types.Int)
	if !ok {
		return nil, 0, types.MaybeNoSuchOverloadErr(list)
	}
	return lister, size, nil
}
