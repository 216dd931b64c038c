package library

import (
	"math"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// CostEstimator charges the runtime cost of the calls of this package's
// functions (and of the string extension functions whose work grows with
// their input) as Kubernetes' CEL cost estimator does, so that a cost limit
// bounds them by the size of their arguments: a list function costs one
// traversal of its list, a parse costs a traversal of its string, a regular
// expression search costs the string length times the pattern length.
// Other calls keep cel-go's default cost.
//
// Use it with a cost limit when building a program:
//
//	env.Program(ast, cel.CostTracking(library.CostEstimator{}), cel.CostLimit(limit))
type CostEstimator struct{}

var _ interpreter.ActualCostEstimator = CostEstimator{}

// CallCost returns the cost of one call of function with args that
// returned result; nil for cel-go's default. The overload id is not used:
// it is empty when the call is dispatched at runtime.
func (CostEstimator) CallCost(function, _ string, args []ref.Val, result ref.Val) *uint64 {
	cost, ok := callCost(function, args, result)
	if !ok {
		return nil
	}
	return &cost
}

// callCost is CallCost without the pointer; ok is false for a call it does
// not price.
func callCost(function string, args []ref.Val, result ref.Val) (uint64, bool) {
	switch function {
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		if len(args) == 0 {
			return 0, true
		}
		return traversalCost(args[0]), true
	case "url", "lowerAscii", "upperAscii", "substring", "trim", "cidr", "isIP", "isCIDR", "quantity", "isQuantity":
		return argTraversal(args, 0, 1)
	case "replace", "split", "ip.isCanonical":
		return argTraversal(args, 0, 2)
	case "join":
		return stringCost(actualSize(result), 2), true
	case "find", "findAll":
		if len(args) < 2 {
			return 0, false
		}
		return regexCost(actualSize(args[0]), actualSize(args[1])), true
	case "ip":
		if len(args) == 1 {
			if _, isCIDR := args[0].(CIDRValue); isCIDR {
				// cidr.ip() reads a field.
				return 1, true
			}
		}
		return argTraversal(args, 0, 1)
	case "containsIP", "containsCIDR":
		return containsCost(function, args)
	case "validate":
		if len(args) < 2 {
			return 0, false
		}
		f, ok := args[0].Value().(FormatValue)
		if !ok {
			return 0, false
		}
		return regexCost(actualSize(args[1]), uint64(f.MaxRegexSize)), true
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
		"isLinkLocalUnicast", "isGlobalUnicast", "format.named",
		"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub",
		"getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return 1, true
	case "_==_":
		if len(args) == 2 && isLibraryValue(args[0]) {
			return 1, true
		}
	}
	return 0, false
}

// isLibraryValue reports whether v is one of this package's value types.
func isLibraryValue(v ref.Val) bool {
	switch v.(type) {
	case URLValue, QuantityValue, IPValue, CIDRValue, FormatValue:
		return true
	}
	return false
}

// argTraversal is the cost of traversing args[i] factor times.
func argTraversal(args []ref.Val, i int, factor float64) (uint64, bool) {
	if len(args) <= i {
		return 0, false
	}
	return stringCost(actualSize(args[i]), factor), true
}

// stringCost is the cost of traversing a string of size characters factor
// times.
func stringCost(size uint64, factor float64) uint64 {
	return uint64(math.Ceil(float64(size) * factor * common.StringTraversalCostFactor))
}

// regexCost is the cost of matching a pattern of patternSize characters
// against a string of strSize characters (RE2 is linear in both).
func regexCost(strSize, patternSize uint64) uint64 {
	strCost := uint64(math.Ceil((1.0 + float64(strSize)) * common.StringTraversalCostFactor))
	reCost := uint64(math.Ceil(float64(patternSize) * common.RegexStringLengthCostFactor))
	return strCost * reCost
}

// containsCost prices containsIP and containsCIDR: comparing the prefix
// bytes, plus masking for containsCIDR, plus parsing a string argument. It
// looks at the arguments, not the overload id, which is empty when the call
// is dispatched at runtime (a dyn argument).
func containsCost(function string, args []ref.Val) (uint64, bool) {
	if len(args) < 2 {
		return 0, false
	}
	cidrSize, otherSize := actualSize(args[0]), actualSize(args[1])
	cost := stringCost(2*cidrSize, 1)
	if function == "containsCIDR" {
		cost += stringCost(cidrSize, 1) + 1
	}
	if _, isString := args[1].(types.String); isString {
		cost += stringCost(otherSize, 1)
	}
	return cost, true
}

// actualSize is the size of a value that has one (strings, bytes, lists,
// maps, IPs, CIDRs); 1 for others.
func actualSize(v ref.Val) uint64 {
	if sz, ok := v.(traits.Sizer); ok {
		if n, ok := sz.Size().(types.Int); ok && n >= 0 {
			return uint64(n)
		}
	}
	return 1
}

// traversalCost is the cost of visiting every element of v, strings and
// bytes counting by length.
func traversalCost(v ref.Val) uint64 {
	switch vt := v.(type) {
	case types.String:
		return uint64(float64(len(string(vt))) * common.StringTraversalCostFactor)
	case types.Bytes:
		return uint64(float64(len([]byte(vt))) * common.StringTraversalCostFactor)
	case traits.Lister:
		var cost uint64
		for it := vt.Iterator(); it.HasNext() == types.True; {
			cost += traversalCost(it.Next())
		}
		return cost
	case traits.Mapper:
		var cost uint64
		for it := vt.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			cost += traversalCost(k) + traversalCost(vt.Get(k))
		}
		return cost
	}
	return 1
}
