// Package fieldmanager records who owns which fields of an object
// (metadata.managedFields) on every write, and merges server-side apply
// requests (application/apply-patch+yaml) with their conflicts, as upstream
// does: with apimachinery's managedfields, which runs structured-merge-diff
// over the types of the server's OpenAPI models. A create of a built-in
// kind is recorded by Manager.Create through the fast path
// fastpath.CreateFields, which finds the same fields as upstream's
// comparison with the empty object by one walk of the Go value, and leaves
// to upstream's code whatever it does not mirror exactly.
package fieldmanager
