package library

import (
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The CEL types of the library values. The names are those Kubernetes uses,
// so type names in messages and type() results match.
var (
	// URLType is the CEL type of the values url() returns.
	URLType = cel.ObjectType("kubernetes.URL")
	// QuantityType is the CEL type of the values quantity() returns.
	QuantityType = cel.ObjectType("kubernetes.Quantity")
	// IPType is the CEL type of the values ip() returns.
	IPType = cel.OpaqueType("net.IP")
	// CIDRType is the CEL type of the values cidr() returns.
	CIDRType = cel.OpaqueType("net.CIDR")
	// FormatType is the CEL type of the named formats of the format library.
	FormatType = cel.ObjectType("kubernetes.NamedFormat")
)

// convertToType is the ConvertToType of the library values: a value
// converts to its own type, to type (giving its type) and, with a non-nil
// toString, to string.
func convertToType(v ref.Val, own *cel.Type, to ref.Type, toString func() string) ref.Val {
	switch {
	case to == own || to.TypeName() == own.TypeName():
		return v
	case to == types.TypeType:
		return own
	case to == types.StringType && toString != nil:
		return types.String(toString())
	}
	return types.NewErr("type conversion error from '%s' to '%s'", own, to)
}

// URLValue is a parsed URL as a CEL value.
type URLValue struct {
	*url.URL
}

// ConvertToNative converts the URL to a *url.URL or a string.
func (u URLValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeOf(u.URL).AssignableTo(typeDesc) {
		return u.URL, nil
	}
	if reflect.TypeOf("").AssignableTo(typeDesc) {
		return u.URL.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'URL' to '%v'", typeDesc)
}

// ConvertToType converts the URL to its own type or to type.
func (u URLValue) ConvertToType(typeVal ref.Type) ref.Val {
	return convertToType(u, URLType, typeVal, nil)
}

// Equal reports whether other is a URL with the same string form.
func (u URLValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(URLValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(u.URL.String() == o.URL.String())
}

// Type returns URLType.
func (u URLValue) Type() ref.Type { return URLType }

// Value returns the *url.URL.
func (u URLValue) Value() any { return u.URL }

// QuantityValue is a resource quantity as a CEL value. The Quantity it
// points to is never changed after the value is made.
type QuantityValue struct {
	*resource.Quantity
}

// ConvertToNative converts the quantity to a *resource.Quantity or a string.
func (q QuantityValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeOf(q.Quantity).AssignableTo(typeDesc) {
		return q.Quantity, nil
	}
	if reflect.TypeOf("").AssignableTo(typeDesc) {
		return q.Quantity.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'Quantity' to '%v'", typeDesc)
}

// ConvertToType converts the quantity to its own type or to type.
func (q QuantityValue) ConvertToType(typeVal ref.Type) ref.Val {
	return convertToType(q, QuantityType, typeVal, nil)
}

// Equal reports whether other is a quantity of the same amount: 1Ki equals
// 1024.
func (q QuantityValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(QuantityValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(q.Quantity.Equal(*o.Quantity))
}

// Type returns QuantityType.
func (q QuantityValue) Type() ref.Type { return QuantityType }

// Value returns the *resource.Quantity.
func (q QuantityValue) Value() any { return q.Quantity }

// IPValue is an IPv4 or IPv6 address, without zone, as a CEL value.
type IPValue struct {
	netip.Addr
}

// ConvertToNative converts the address to a netip.Addr or a string.
func (i IPValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeOf(i.Addr).AssignableTo(typeDesc) {
		return i.Addr, nil
	}
	if reflect.TypeOf("").AssignableTo(typeDesc) {
		return i.Addr.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'IP' to '%v'", typeDesc)
}

// ConvertToType converts the address to its own type, to type or to string.
func (i IPValue) ConvertToType(typeVal ref.Type) ref.Val {
	return convertToType(i, IPType, typeVal, i.Addr.String)
}

// Equal reports whether other is the same address.
func (i IPValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(IPValue)
	if !ok {
		return types.ValOrErr(other, "no such overload")
	}
	return types.Bool(i.Addr == o.Addr)
}

// Type returns IPType.
func (i IPValue) Type() ref.Type { return IPType }

// Value returns the netip.Addr.
func (i IPValue) Value() any { return i.Addr }

// Size returns the length of the address in bytes: 4 or 16.
func (i IPValue) Size() ref.Val {
	return types.Int(int(math.Ceil(float64(i.Addr.BitLen()) / 8)))
}

// CIDRValue is an IP prefix (an address and a prefix length) as a CEL
// value. The address is kept as written: it need not be the network
// address.
type CIDRValue struct {
	netip.Prefix
}

// ConvertToNative converts the prefix to a netip.Prefix or a string.
func (c CIDRValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeOf(c.Prefix).AssignableTo(typeDesc) {
		return c.Prefix, nil
	}
	if reflect.TypeOf("").AssignableTo(typeDesc) {
		return c.Prefix.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'CIDR' to '%v'", typeDesc)
}

// ConvertToType converts the prefix to its own type, to type or to string.
func (c CIDRValue) ConvertToType(typeVal ref.Type) ref.Val {
	return convertToType(c, CIDRType, typeVal, c.Prefix.String)
}

// Equal reports whether other is the same prefix, address included.
func (c CIDRValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(CIDRValue)
	if !ok {
		return types.ValOrErr(other, "no such overload")
	}
	return types.Bool(c.Prefix == o.Prefix)
}

// Type returns CIDRType.
func (c CIDRValue) Type() ref.Type { return CIDRType }

// Value returns the netip.Prefix.
func (c CIDRValue) Value() any { return c.Prefix }

// Size returns the prefix length in bytes, rounded up.
func (c CIDRValue) Size() ref.Val {
	return types.Int(int(math.Ceil(float64(c.Prefix.Bits()) / 8)))
}

// FormatValue is a named string format: a name and the function that
// validates a string against it, returning one message per problem.
type FormatValue struct {
	// Name is the format's name as Kubernetes spells it, e.g. "DNS1123Label".
	Name string
	// ValidateFunc returns the problems of a string; none if it is valid.
	ValidateFunc func(string) []string
	// MaxRegexSize is the length of the regular expression ValidateFunc
	// uses, or of one of equivalent work; CostEstimator charges by it.
	MaxRegexSize int
}

// ConvertToNative always fails: a format has no native form.
func (f FormatValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from 'Format' to '%v'", typeDesc)
}

// ConvertToType converts the format to its own type or to type.
func (f FormatValue) ConvertToType(typeVal ref.Type) ref.Val {
	return convertToType(f, FormatType, typeVal, nil)
}

// Equal reports whether other is a format of the same name.
func (f FormatValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(FormatValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(f.Name == o.Name)
}

// Type returns FormatType.
func (f FormatValue) Type() ref.Type { return FormatType }

// Value returns the FormatValue itself.
func (f FormatValue) Value() any { return f }
