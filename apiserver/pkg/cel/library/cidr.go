package library

import (
	"fmt"
	"net/netip"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// CIDR is the Kubernetes CIDR library. It uses the IP type of the IP
// library; add both.
//
//	cidr(<string>) <CIDR>                error on an invalid prefix or an IPv4-mapped IPv6 address
//	isCIDR(<string>) <bool>              whether cidr() would succeed
//	<CIDR>.containsIP(<IP>) <bool>       and <CIDR>.containsIP(<string>)
//	<CIDR>.containsCIDR(<CIDR>) <bool>   and <CIDR>.containsCIDR(<string>)
//	<CIDR>.ip() <IP>                     the address as written, e.g. 10.1.2.3 for 10.1.2.3/8
//	<CIDR>.masked() <CIDR>               the prefix with the host bits cleared
//	<CIDR>.prefixLength() <int>
//	string(<CIDR>) <string>
//
// The identifier net.CIDR names the type.
//
// Examples:
//
//	cidr('10.0.0.0/8').containsIP('10.1.2.3') // true
//	cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') // true
//	cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') // true
//	cidr('10.0.0.0/33') // error
func CIDR() cel.EnvOption {
	return cel.Lib(cidrLib{})
}

type cidrLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (cidrLib) LibraryName() string { return "kubernetes.net.cidr" }

// CompileOptions declares the CIDR type, the net.CIDR identifier and the
// CIDR functions.
func (cidrLib) CompileOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Types(CIDRType),
		cel.Variable(CIDRType.TypeName(), types.NewTypeTypeWithParam(CIDRType)),
	}
	return append(opts, functionOptions(map[string][]cel.FunctionOpt{
		"cidr": {cel.Overload("string_to_cidr", []*cel.Type{cel.StringType}, CIDRType,
			cel.UnaryBinding(stringToCIDR))},
		"isCIDR": {cel.Overload("is_cidr", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(isCIDR))},
		"containsIP": {
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{CIDRType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(func(c, s ref.Val) ref.Val { return cidrContainsIP(c, stringToIP(s)) })),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{CIDRType, IPType}, cel.BoolType,
				cel.BinaryBinding(cidrContainsIP)),
		},
		"containsCIDR": {
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{CIDRType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(func(c, s ref.Val) ref.Val { return cidrContainsCIDR(c, stringToCIDR(s)) })),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{CIDRType, CIDRType}, cel.BoolType,
				cel.BinaryBinding(cidrContainsCIDR)),
		},
		"ip": {cel.MemberOverload("cidr_ip", []*cel.Type{CIDRType}, IPType,
			cidrUnary(func(p netip.Prefix) ref.Val { return IPValue{Addr: p.Addr()} }))},
		"masked": {cel.MemberOverload("cidr_masked", []*cel.Type{CIDRType}, CIDRType,
			cidrUnary(func(p netip.Prefix) ref.Val { return CIDRValue{Prefix: p.Masked()} }))},
		"prefixLength": {cel.MemberOverload("cidr_prefix_length", []*cel.Type{CIDRType}, cel.IntType,
			cidrUnary(func(p netip.Prefix) ref.Val { return types.Int(p.Bits()) }))},
		"string": {cel.Overload("cidr_to_string", []*cel.Type{CIDRType}, cel.StringType,
			cidrUnary(func(p netip.Prefix) ref.Val { return types.String(p.String()) }))},
	})...)
}

// ProgramOptions returns nothing: the library needs no program option.
func (cidrLib) ProgramOptions() []cel.ProgramOption { return nil }

// cidrUnary binds f to an overload taking a CIDR.
func cidrUnary(f func(netip.Prefix) ref.Val) cel.OverloadOpt {
	return cel.UnaryBinding(func(arg ref.Val) ref.Val {
		c, ok := arg.(CIDRValue)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return f(c.Prefix)
	})
}

func stringToCIDR(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	p, err := parseCIDR(s)
	if err != nil {
		// Kubernetes prefixes the message twice; kept for identical messages.
		return types.NewErr("network address parse error during conversion from string: %v", err)
	}
	return CIDRValue{Prefix: p}
}

func isCIDR(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := parseCIDR(s)
	return types.Bool(err == nil)
}

// cidrContainsIP reports whether the prefix holds the address. An error
// argument (a string that is not an IP) is returned as is.
func cidrContainsIP(arg, other ref.Val) ref.Val {
	c, ok := arg.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	ip, ok := other.(IPValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(c.Prefix.Contains(ip.Addr))
}

// cidrContainsCIDR reports whether the first prefix holds all of the
// second. An error argument (a string that is not a CIDR) is returned as is.
func cidrContainsCIDR(arg, other ref.Val) ref.Val {
	c, ok := arg.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	o, ok := other.(CIDRValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(c.Prefix.Overlaps(o.Prefix) && c.Prefix.Bits() <= o.Prefix.Bits())
}

// parseCIDR parses a prefix as Kubernetes' CEL library does:
// netip.ParsePrefix, then no IPv4-mapped IPv6 address.
func parseCIDR(raw string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(raw)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return p, nil
}
