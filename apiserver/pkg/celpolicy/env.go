package celpolicy

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"skiff.dev/apiserver/pkg/cel/library"
)

// Variable names that every policy expression sees.
const (
	VarObject          = "object"
	VarOldObject       = "oldObject"
	VarRequest         = "request"
	VarParams          = "params"
	VarNamespaceObject = "namespaceObject"
	VarVariables       = "variables"
)

// Limits, as upstream's k8s.io/apiserver/pkg/apis/cel constants.
const (
	// RuntimeCostLimit bounds the cost of evaluating one expression
	// (upstream's RuntimeCELCostBudget, which upstream shares between the
	// expressions of one policy evaluation).
	RuntimeCostLimit = 10_000_000
	// MaxExpressionSize bounds the length of one expression's source.
	MaxExpressionSize = 100 * 1024
	// MaxMessageSize bounds an evaluated messageExpression.
	MaxMessageSize = 5 * 1024
	// interruptEvery is how many comprehension iterations pass between
	// checks of the request's context.
	interruptEvery = 100
)

// Kind is what an expression is for; it decides the result type.
type Kind int

const (
	// Validation expressions return a bool.
	Validation Kind = iota
	// MatchCondition expressions return a bool.
	MatchCondition
	// Message expressions (messageExpression) return a string.
	Message
	// Variable expressions return any value.
	Variable
	// AuditAnnotation valueExpressions return a string or null.
	AuditAnnotation
)

// Env is the compiled-once CEL environment of policy expressions. It is
// safe for concurrent use.
type Env struct {
	env *cel.Env
}

// NewEnv builds the environment of policy expressions. Building one takes
// a few milliseconds: build it once and keep it.
func NewEnv() (*Env, error) {
	e, err := cel.NewEnv(
		cel.Variable(VarObject, cel.DynType),
		cel.Variable(VarOldObject, cel.DynType),
		cel.Variable(VarRequest, cel.DynType),
		cel.Variable(VarParams, cel.DynType),
		cel.Variable(VarNamespaceObject, cel.DynType),
		cel.Variable(VarVariables, cel.MapType(cel.StringType, cel.DynType)),
		cel.HomogeneousAggregateLiterals(),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		cel.ParserExpressionSizeLimit(MaxExpressionSize),
		ext.Strings(ext.StringsVersion(2)),
		ext.Lists(),
		ext.Sets(),
		ext.Math(),
		ext.Encoders(),
		ext.Bindings(),
		library.Libraries(),
		cel.Lib(authorizerLib{}),
	)
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	return &Env{env: e}, nil
}

// Program is one compiled expression.
type Program struct {
	Source string
	Kind   Kind
	prg    cel.Program
}

// Compile parses, checks and plans expr. The error is upstream's wording
// ("compilation failed: ERROR: <input>:1:3: ...") and names no field: the
// caller adds the field path.
func (e *Env) Compile(expr string, kind Kind) (*Program, error) {
	if len(expr) > MaxExpressionSize {
		return nil, fmt.Errorf("compilation failed: the expression is longer than %d bytes", MaxExpressionSize)
	}
	ast, iss := e.env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %v", iss.Err())
	}
	if err := checkOutput(ast.OutputType(), kind); err != nil {
		return nil, err
	}
	prg, err := e.env.Program(ast,
		cel.CostLimit(RuntimeCostLimit),
		cel.CostTracking(library.CostEstimator{}),
		cel.InterruptCheckFrequency(interruptEvery),
		cel.EvalOptions(cel.OptOptimize),
	)
	if err != nil {
		return nil, fmt.Errorf("compilation failed: %v", err)
	}
	return &Program{Source: expr, Kind: kind, prg: prg}, nil
}

// checkOutput refuses an expression whose static type cannot be what its
// kind needs (a dynamic result is checked when it is evaluated).
func checkOutput(t *cel.Type, kind Kind) error {
	if t == nil || t.IsExactType(cel.DynType) {
		return nil
	}
	switch kind {
	case Validation, MatchCondition:
		if !t.IsExactType(cel.BoolType) {
			return fmt.Errorf("compilation failed: must evaluate to bool")
		}
	case Message:
		if !t.IsExactType(cel.StringType) {
			return fmt.Errorf("compilation failed: must evaluate to string")
		}
	case AuditAnnotation:
		if !t.IsExactType(cel.StringType) && !t.IsExactType(cel.NullType) {
			return fmt.Errorf("compilation failed: must evaluate to one of [string null_type]")
		}
	}
	return nil
}
