// Package validatingpolicy is the ValidatingAdmissionPolicy admission
// plugin: it enforces ValidatingAdmissionPolicies through their
// ValidatingAdmissionPolicyBindings with CEL, as upstream's plugin of the
// same name does.
//
// The plugin is fed the policies and bindings from the API server's watch
// caches (Apply, Reset), and compiles each policy's expressions once per
// policy generation. For a request it takes every binding whose policy
// exists and where both the policy's matchConstraints and the binding's
// matchResources match the request (resource rules with operations, groups,
// versions, resources and subresources, exclusions, namespace and object
// selectors). For each such binding it gathers the parameters (paramKind
// with the binding's paramRef), evaluates the policy's matchConditions (all
// must be true), its variables, then each validation with the variables
// object, oldObject, request, params, namespaceObject and variables. A
// failed validation is acted on by the binding's validationActions: Deny
// refuses the request with upstream's Status, Warn adds a warning to the
// response, Audit adds an audit annotation. An evaluation error follows
// the policy's failurePolicy (Fail denies, Ignore allows). Besides each
// expression's own cost limit, one evaluation has upstream's runtime cost
// budgets (celpolicy.RuntimeCostBudgetMatchConditions for the
// matchConditions, celpolicy.RuntimeCostBudget for the variables,
// validations and messageExpressions, another for the audit annotations);
// running out of one is an evaluation error with upstream's message.
package validatingpolicy
