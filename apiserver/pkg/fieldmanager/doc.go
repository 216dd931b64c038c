// Package fieldmanager records who owns which fields of an object
// (metadata.managedFields) on every write, and merges server-side apply
// requests (application/apply-patch+yaml) with their conflicts, as upstream
// does: with apimachinery's managedfields, which runs structured-merge-diff
// over the types of the server's OpenAPI models.
package fieldmanager
