// Package library holds skiff's implementation of the CEL function
// libraries that Kubernetes adds to the expressions of CRD validation rules
// (x-kubernetes-validations) and ValidatingAdmissionPolicy: URLs, regular
// expressions, lists, quantities, IP addresses, CIDRs and named formats.
//
// Each library is a cel.EnvOption built with cel.Lib; All returns them
// together. The function names, overloads, CEL type names, results and
// error messages follow those of k8s.io/apiserver/pkg/cel/library, so a rule
// written for a Kubernetes API server type-checks and evaluates the same way
// here. No overload clashes with those of cel-go's ext.Strings, ext.Lists,
// ext.Sets or ext.Math (ext.Strings' indexOf and lastIndexOf on strings and
// this package's on lists are overloads of the same functions), so they can
// share an environment.
//
// A typical environment:
//
//	opts := append([]cel.EnvOption{cel.OptionalTypes(), ext.Strings()}, library.All()...)
//	env, err := cel.NewEnv(opts...)
//
// CostEstimator prices the calls of these functions for a runtime cost
// limit (cel.CostTracking), as Kubernetes' estimator does; without it every
// call costs 1 whatever the size of its arguments.
//
// The library values (a URL, a Quantity, an IP, a CIDR, a Format) are
// immutable: every function returns a new value and never changes its
// arguments.
package library
