// Package celpolicy compiles and evaluates the CEL expressions of
// ValidatingAdmissionPolicies (validations, messageExpressions,
// matchConditions, variables and auditAnnotations) with
// github.com/google/cel-go.
//
// The environment is upstream's base CEL environment
// (k8s.io/apiserver/pkg/cel/environment) of this Kubernetes version, with
// the Kubernetes libraries of k8s.io/apiserver/pkg/cel/library (URLs,
// regex, lists, quantity, IP, CIDR, format, authorizer), plus cel-go's
// lists, math, encoders and bindings extensions. The variables object,
// oldObject, request, params, namespaceObject and variables are dynamic:
// objects are given to CEL as the maps runtime.DefaultUnstructuredConverter
// makes of them, so a field that is not set is absent (has() tells), as
// upstream. The authorizer library's checks reach skiff's authorizer
// through an AuthorizeFunc.
//
// Every program is built with upstream's cost estimator and per-call cost
// limit (RuntimeCostLimit) and an interrupt check, so a costly expression
// fails with an error instead of holding the request. An Activation with a
// Budget also charges each evaluation's actual cost to a budget shared by
// several expressions (RuntimeCostBudget for a policy's validations, as
// upstream's RuntimeCELCostBudget), failing with ErrOutOfBudget once it is
// spent.
package celpolicy
