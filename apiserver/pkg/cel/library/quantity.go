package library

import (
	"errors"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Quantity is the Kubernetes resource quantity library
// (k8s.io/apimachinery/pkg/api/resource.Quantity).
//
//	quantity(<string>) <Quantity>          error if the string is not a quantity
//	isQuantity(<string>) <bool>            whether quantity() would succeed
//	<Quantity>.isInteger() <bool>          whether asInteger() would succeed
//	<Quantity>.asInteger() <int>           error "cannot convert value to integer" on overflow or a fraction
//	<Quantity>.asApproximateFloat() <double>  may lose precision; +Inf/-Inf out of range
//	sign(<Quantity>) <int>                 1, 0 or -1 (also <Quantity>.sign(), see below)
//	<Quantity>.add(<Quantity>) <Quantity>  and <Quantity>.add(<int>)
//	<Quantity>.sub(<Quantity>) <Quantity>  and <Quantity>.sub(<int>)
//	<Quantity>.isGreaterThan(<Quantity>) <bool>
//	<Quantity>.isLessThan(<Quantity>) <bool>
//	<Quantity>.compareTo(<Quantity>) <int>  1, 0 or -1
//
// Kubernetes declares sign only as a global function, sign(q), although its
// documentation shows q.sign(); this library declares both forms.
//
// Examples:
//
//	quantity('1Gi').isGreaterThan(quantity('100Mi')) // true
//	quantity('50k').add(20) == quantity('50020') // true
//	quantity('50M').compareTo(quantity('50Mi')) // -1
//	quantity('200K') // error
func Quantity() cel.EnvOption {
	return cel.Lib(quantityLib{})
}

type quantityLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (quantityLib) LibraryName() string { return "kubernetes.quantity" }

// CompileOptions declares the quantity functions.
func (quantityLib) CompileOptions() []cel.EnvOption {
	q := []*cel.Type{QuantityType}
	qq := []*cel.Type{QuantityType, QuantityType}
	qi := []*cel.Type{QuantityType, cel.IntType}
	return functionOptions(map[string][]cel.FunctionOpt{
		"quantity": {cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, QuantityType,
			cel.UnaryBinding(stringToQuantity))},
		"isQuantity": {cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(isQuantity))},
		"sign": {
			cel.Overload("quantity_sign", q, cel.IntType, quantityUnary(quantitySign)),
			cel.MemberOverload("quantity_sign_member", q, cel.IntType, quantityUnary(quantitySign)),
		},
		"isGreaterThan": {cel.MemberOverload("quantity_is_greater_than", qq, cel.BoolType,
			quantityBinary(func(a, b *resource.Quantity) ref.Val { return types.Bool(a.Cmp(*b) == 1) }))},
		"isLessThan": {cel.MemberOverload("quantity_is_less_than", qq, cel.BoolType,
			quantityBinary(func(a, b *resource.Quantity) ref.Val { return types.Bool(a.Cmp(*b) == -1) }))},
		"compareTo": {cel.MemberOverload("quantity_compare_to", qq, cel.IntType,
			quantityBinary(func(a, b *resource.Quantity) ref.Val { return types.Int(a.Cmp(*b)) }))},
		"asApproximateFloat": {cel.MemberOverload("quantity_get_float", q, cel.DoubleType,
			quantityUnary(func(a *resource.Quantity) ref.Val { return types.Double(a.AsApproximateFloat64()) }))},
		"asInteger": {cel.MemberOverload("quantity_get_int", q, cel.IntType, quantityUnary(quantityAsInteger))},
		"isInteger": {cel.MemberOverload("quantity_is_integer", q, cel.BoolType,
			quantityUnary(func(a *resource.Quantity) ref.Val { _, ok := a.AsInt64(); return types.Bool(ok) }))},
		"add": {
			cel.MemberOverload("quantity_add", qq, QuantityType, quantityBinary(quantityAdd)),
			cel.MemberOverload("quantity_add_int", qi, QuantityType, quantityIntBinary(quantityAdd)),
		},
		"sub": {
			cel.MemberOverload("quantity_sub", qq, QuantityType, quantityBinary(quantitySub)),
			cel.MemberOverload("quantity_sub_int", qi, QuantityType, quantityIntBinary(quantitySub)),
		},
	})
}

// ProgramOptions returns nothing: the library needs no program option.
func (quantityLib) ProgramOptions() []cel.ProgramOption { return nil }

// quantityUnary binds f to an overload taking a quantity.
func quantityUnary(f func(*resource.Quantity) ref.Val) cel.OverloadOpt {
	return cel.UnaryBinding(func(arg ref.Val) ref.Val {
		q, ok := arg.Value().(*resource.Quantity)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return f(q)
	})
}

// quantityBinary binds f to an overload taking two quantities.
func quantityBinary(f func(a, b *resource.Quantity) ref.Val) cel.OverloadOpt {
	return cel.BinaryBinding(func(arg, other ref.Val) ref.Val {
		a, ok := arg.Value().(*resource.Quantity)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		b, ok := other.Value().(*resource.Quantity)
		if !ok {
			return types.MaybeNoSuchOverloadErr(other)
		}
		return f(a, b)
	})
}

// quantityIntBinary binds f to an overload taking a quantity and an int;
// the int is a plain decimal quantity.
func quantityIntBinary(f func(a, b *resource.Quantity) ref.Val) cel.OverloadOpt {
	return cel.BinaryBinding(func(arg, other ref.Val) ref.Val {
		a, ok := arg.Value().(*resource.Quantity)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		i, ok := other.Value().(int64)
		if !ok {
			return types.MaybeNoSuchOverloadErr(other)
		}
		return f(a, resource.NewQuantity(i, resource.DecimalExponent))
	})
}

func isQuantity(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := resource.ParseQuantity(s)
	return types.Bool(err == nil)
}

func stringToQuantity(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return types.WrapErr(err)
	}
	return QuantityValue{Quantity: &q}
}

func quantitySign(q *resource.Quantity) ref.Val { return types.Int(q.Sign()) }

func quantityAsInteger(q *resource.Quantity) ref.Val {
	v, ok := q.AsInt64()
	if !ok {
		return types.WrapErr(errors.New("cannot convert value to integer"))
	}
	return types.Int(v)
}

// quantityAdd returns a+b in a new quantity; a is not changed.
func quantityAdd(a, b *resource.Quantity) ref.Val {
	r := a.DeepCopy()
	r.Add(*b)
	return QuantityValue{Quantity: &r}
}

// quantitySub returns a-b in a new quantity; a is not changed.
func quantitySub(a, b *resource.Quantity) ref.Val {
	r := a.DeepCopy()
	r.Sub(*b)
	return QuantityValue{Quantity: &r}
}
