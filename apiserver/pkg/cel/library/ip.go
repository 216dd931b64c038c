package library

import (
	"fmt"
	"net/netip"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// IP is the Kubernetes IP address library.
//
//	ip(<string>) <IP>             error on an invalid address, an IPv4-mapped IPv6 address or a zone
//	isIP(<string>) <bool>         whether ip() would succeed
//	ip.isCanonical(<string>) <bool>  whether the string is the address's canonical form; error if not an IP
//	<IP>.family() <int>           4 or 6
//	<IP>.isUnspecified() <bool>   0.0.0.0 or ::
//	<IP>.isLoopback() <bool>
//	<IP>.isLinkLocalMulticast() <bool>
//	<IP>.isLinkLocalUnicast() <bool>
//	<IP>.isGlobalUnicast() <bool>
//	string(<IP>) <string>         the canonical form
//
// The identifier net.IP names the type, so type(ip('1.2.3.4')) == net.IP.
//
// Examples:
//
//	ip('10.0.0.1').family() // 4
//	ip('::ffff:1.2.3.4') // error
//	ip.isCanonical('2001:db8::0:1') // false
//	string(ip('2001:DB8::1')) // '2001:db8::1'
func IP() cel.EnvOption {
	return cel.Lib(ipLib{})
}

type ipLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (ipLib) LibraryName() string { return "kubernetes.net.ip" }

// CompileOptions declares the IP type, the net.IP identifier and the IP
// functions.
func (ipLib) CompileOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Types(IPType),
		cel.Variable(IPType.TypeName(), types.NewTypeTypeWithParam(IPType)),
	}
	return append(opts, functionOptions(map[string][]cel.FunctionOpt{
		"ip": {cel.Overload("string_to_ip", []*cel.Type{cel.StringType}, IPType,
			cel.UnaryBinding(stringToIP))},
		"isIP": {cel.Overload("is_ip", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(isIP))},
		"ip.isCanonical": {cel.Overload("ip_is_canonical", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(ipIsCanonical))},
		"family": {cel.MemberOverload("ip_family", []*cel.Type{IPType}, cel.IntType,
			ipUnary(family))},
		"isUnspecified":        ipPredicate("ip_is_unspecified", netip.Addr.IsUnspecified),
		"isLoopback":           ipPredicate("ip_is_loopback", netip.Addr.IsLoopback),
		"isLinkLocalMulticast": ipPredicate("ip_is_link_local_multicast", netip.Addr.IsLinkLocalMulticast),
		"isLinkLocalUnicast":   ipPredicate("ip_is_link_local_unicast", netip.Addr.IsLinkLocalUnicast),
		"isGlobalUnicast":      ipPredicate("ip_is_global_unicast", netip.Addr.IsGlobalUnicast),
		"string": {cel.Overload("ip_to_string", []*cel.Type{IPType}, cel.StringType,
			ipUnary(func(a netip.Addr) ref.Val { return types.String(a.String()) }))},
	})...)
}

// ProgramOptions returns nothing: the library needs no program option.
func (ipLib) ProgramOptions() []cel.ProgramOption { return nil }

// ipUnary binds f to an overload taking an IP.
func ipUnary(f func(netip.Addr) ref.Val) cel.OverloadOpt {
	return cel.UnaryBinding(func(arg ref.Val) ref.Val {
		ip, ok := arg.(IPValue)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return f(ip.Addr)
	})
}

// ipPredicate declares an IP method returning a bool.
func ipPredicate(id string, pred func(netip.Addr) bool) []cel.FunctionOpt {
	return []cel.FunctionOpt{cel.MemberOverload(id, []*cel.Type{IPType}, cel.BoolType,
		ipUnary(func(a netip.Addr) ref.Val { return types.Bool(pred(a)) }))}
}

func stringToIP(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	addr, err := parseIPAddr(s)
	if err != nil {
		return types.NewErr("%v", err)
	}
	return IPValue{Addr: addr}
}

func isIP(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := parseIPAddr(s)
	return types.Bool(err == nil)
}

func ipIsCanonical(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	addr, err := parseIPAddr(s)
	if err != nil {
		return types.NewErr("%v", err)
	}
	return types.Bool(addr.String() == s)
}

func family(a netip.Addr) ref.Val {
	switch {
	case a.Is4():
		return types.Int(4)
	case a.Is6():
		return types.Int(6)
	}
	return types.NewErr("IP address %q is not an IPv4 or IPv6 address", a.String())
}

// parseIPAddr parses an IP address as Kubernetes' CEL library does:
// netip.ParseAddr, then no zone and no IPv4-mapped IPv6 address.
func parseIPAddr(raw string) (netip.Addr, error) {
	addr, err := netip.ParseAddr(raw)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("IP Address %q parse error during conversion from string: %v", raw, err)
	}
	if addr.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("IP address %q with zone value is not allowed", raw)
	}
	if addr.Is4In6() {
		return netip.Addr{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return addr, nil
}
