package celpolicy

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

// Variable names that every policy expression sees.
const (
	VarObject          = "object"
	VarOldObject       = "oldObject"
	VarRequest         = "request"
	VarParams          = "params"
	VarNamespaceObject = "namespaceObject"
	VarVariables       = "variables"
	VarAuthorizer      = "authorizer"
	VarRequestResource = "authorizer.requestResource"
)

// Limits, upstream's (k8s.io/apiserver/pkg/apis/cel and the admission
// policy plugin).
const (
	// RuntimeCostLimit bounds the cost of evaluating one expression:
	// upstream's PerCallLimit, which its base environment sets.
	RuntimeCostLimit = celconfig.PerCallLimit
	// RuntimeCostBudget bounds the cost of one evaluation of a policy
	// (one binding and parameter object) across its variables and
	// validations with their messageExpressions, and again across its
	// auditAnnotations: upstream's RuntimeCELCostBudget.
	RuntimeCostBudget = celconfig.RuntimeCELCostBudget
	// RuntimeCostBudgetMatchConditions bounds the cost of a policy's
	// matchConditions in one evaluation: upstream's
	// RuntimeCELCostBudgetMatchConditions.
	RuntimeCostBudgetMatchConditions = celconfig.RuntimeCELCostBudgetMatchConditions
	// MaxExpressionSize bounds the length of one expression's source.
	MaxExpressionSize = 100 * 1024
	// MaxMessageSize bounds an evaluated messageExpression.
	MaxMessageSize = 5 * 1024
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

// NewEnv builds the environment of policy expressions: upstream's base
// CEL environment of this Kubernetes version (k8s.io/apiserver's
// environment.MustBaseEnvSet: the standard library, optional types, the
// strings and sets extensions, two-variable comprehensions, and the
// Kubernetes libraries of k8s.io/apiserver/pkg/cel/library: URLs, regex,
// lists, quantity, IP, CIDR, format and the authorizer, with upstream's
// cost estimator and per-call cost limit), the policy's variables, and the
// lists, math, encoders and bindings extensions. Building one takes a few
// milliseconds: build it once and keep it.
func NewEnv() (*Env, error) {
	base := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true)
	set, err := base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions: []cel.EnvOption{
			cel.Variable(VarObject, cel.DynType),
			cel.Variable(VarOldObject, cel.DynType),
			cel.Variable(VarRequest, cel.DynType),
			cel.Variable(VarParams, cel.DynType),
			cel.Variable(VarNamespaceObject, cel.DynType),
			cel.Variable(VarVariables, cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable(VarAuthorizer, library.AuthorizerType),
			cel.Variable(VarRequestResource, library.ResourceCheckType),
			cel.ParserExpressionSizeLimit(MaxExpressionSize),
			ext.Lists(),
			ext.Math(),
			ext.Encoders(),
			ext.Bindings(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	return &Env{env: set.NewExpressionsEnv()}, nil
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
	// The base environment brings upstream's cost tracking and per-call
	// limit; the interrupt check lets a cancelled request stop it.
	prg, err := e.env.Program(ast, cel.InterruptCheckFrequency(celconfig.CheckFrequency))
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
