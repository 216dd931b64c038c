package celpolicy

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Activation holds the values of the variables for one evaluation. Objects
// are the maps of runtime.DefaultUnstructuredConverter; a nil map is CEL's
// null.
type Activation struct {
	Object, OldObject, Request, Params, NamespaceObject map[string]any
	// Variables are the policy's variables, evaluated (see EvalVariables).
	Variables map[string]ref.Val
	// Authorize answers the authorizer library's checks for the request's
	// user; nil makes every check an errored decision.
	Authorize AuthorizeFunc
	// RequestResource is the request's own resource (group, resource,
	// subresource, namespace, name), for authorizer.requestResource.
	RequestResource AuthzRequest
	// Budget, when set, is charged the runtime cost of every evaluation
	// with this activation (upstream's remainingBudget).
	Budget *Budget
}

// ErrOutOfBudget is upstream's error when the expressions of one
// evaluation together cost more than their budget.
var ErrOutOfBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// Budget is the runtime cost that the expressions of one evaluation may
// still spend together, besides each call's own RuntimeCostLimit: as
// upstream's admission CEL evaluator, each evaluation's actual cost is
// taken from it, and once an evaluation costs more than is left, that
// evaluation and every one after it fails with ErrOutOfBudget.
type Budget struct {
	left  int64
	spent bool
}

// NewBudget returns a budget of n (RuntimeCostBudget,
// RuntimeCostBudgetMatchConditions).
func NewBudget(n int64) *Budget { return &Budget{left: n} }

// Spent reports whether an evaluation ran out of the budget.
func (b *Budget) Spent() bool { return b.spent }

// charge takes an evaluation's actual cost from b.
func (b *Budget) charge(src string, det *cel.EvalDetails) error {
	if b.spent {
		return ErrOutOfBudget
	}
	var cost *uint64
	if det != nil {
		cost = det.ActualCost()
	}
	if cost == nil {
		b.spent = true
		return &noCostError{src: src}
	}
	if *cost > math.MaxInt64 || int64(*cost) > b.left {
		b.spent = true
		return ErrOutOfBudget
	}
	b.left -= int64(*cost)
	return nil
}

// noCostError is upstream's error for an evaluation whose cost is not
// known; it counts as running out of the budget.
type noCostError struct{ src string }

func (e *noCostError) Error() string {
	return fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", e.src)
}

func (e *noCostError) Is(target error) bool { return target == ErrOutOfBudget }

func (a *Activation) vars(ctx context.Context) map[string]any {
	nullable := func(m map[string]any) any {
		if m == nil {
			return nil
		}
		return m
	}
	vars := map[string]any{}
	for name, v := range a.Variables {
		vars[name] = v
	}
	az, rr := authorizerVars(ctx, a.Authorize, a.RequestResource)
	return map[string]any{
		VarAuthorizer:      az,
		VarRequestResource: rr,
		VarObject:          nullable(a.Object),
		VarOldObject:       nullable(a.OldObject),
		VarRequest:         nullable(a.Request),
		VarParams:          nullable(a.Params),
		VarNamespaceObject: nullable(a.NamespaceObject),
		VarVariables:       vars,
	}
}

// Eval evaluates p. The error is upstream's wording: "expression '<src>'
// resulted in error: <cause>"; with a.Budget set, the evaluation's cost is
// charged to it first and running out of it is ErrOutOfBudget (which
// errors.Is tells).
func (p *Program) Eval(ctx context.Context, a *Activation) (ref.Val, error) {
	if a.Budget != nil && a.Budget.spent {
		return nil, ErrOutOfBudget
	}
	out, det, err := p.prg.ContextEval(ctx, a.vars(ctx))
	if a.Budget != nil {
		if berr := a.Budget.charge(p.Source, det); berr != nil {
			return nil, berr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("expression '%s' resulted in error: %v", p.Source, err)
	}
	return out, nil
}

// EvalBool evaluates a validation or match condition.
func (p *Program) EvalBool(ctx context.Context, a *Activation) (bool, error) {
	out, err := p.Eval(ctx, a)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("expression '%s' resulted in error: must evaluate to bool, got %s", p.Source, out.Type().TypeName())
	}
	return bool(b), nil
}

// EvalString evaluates a messageExpression or an audit annotation's
// valueExpression; isNull reports a null result.
func (p *Program) EvalString(ctx context.Context, a *Activation) (s string, isNull bool, err error) {
	out, err := p.Eval(ctx, a)
	if err != nil {
		return "", false, err
	}
	switch v := out.(type) {
	case types.String:
		return string(v), false, nil
	case types.Null:
		return "", true, nil
	}
	return "", false, fmt.Errorf("expression '%s' resulted in unsupported return type: %s", p.Source, out.Type().TypeName())
}

// NamedProgram is a compiled variable.
type NamedProgram struct {
	Name    string
	Program *Program
}

// EvalVariables evaluates the variables in order into a.Variables; each
// sees the ones before it. A variable that fails holds the error, which
// surfaces only in an expression that reads it (upstream evaluates
// variables lazily, with the same effect).
func EvalVariables(ctx context.Context, vars []NamedProgram, a *Activation) {
	a.Variables = make(map[string]ref.Val, len(vars))
	for _, v := range vars {
		out, err := v.Program.Eval(ctx, a)
		if err != nil {
			a.Variables[v.Name] = types.NewErr("composited variable %q fails to be evaluated: %v", v.Name, err)
			continue
		}
		a.Variables[v.Name] = out
	}
}
