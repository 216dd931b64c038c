// Package celpolicy compiles and evaluates the CEL expressions of
// ValidatingAdmissionPolicies (validations, messageExpressions,
// matchConditions, variables and auditAnnotations) with
// github.com/google/cel-go.
//
// The environment is standard CEL with cel-go's extension libraries
// (strings, lists, sets, math, encoders, bindings, optional types). The
// variables object, oldObject, request, params, namespaceObject and
// variables are dynamic: objects are given to CEL as the maps
// runtime.DefaultUnstructuredConverter makes of them, so a field that is not
// set is absent (has() tells), as upstream. The Kubernetes-specific
// libraries of upstream's k8s.io/apiserver/pkg/cel/library (quantity, IP,
// CIDR, URL, regex helpers, authorizer) are not available: an expression
// that calls them does not compile.
//
// Every program is built with a runtime cost limit (CostLimit) and an
// interrupt check, so a costly expression fails with an error instead of
// holding the request.
package celpolicy
