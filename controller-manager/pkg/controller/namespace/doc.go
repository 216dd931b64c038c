// Package namespace holds the namespace controller. A namespace being
// deleted (deletionTimestamp set, `kubernetes` in spec.finalizers) has
// everything in it deleted: every namespaced resource the server serves
// with the list and delete verbs, found through discovery, by DELETE on
// the collection (or one by one when the collection verb is missing). The
// controller lists what remains and comes back until nothing does (pods in
// their grace period take time), keeping the namespace's deletion
// conditions as upstream does, and then removes the `kubernetes` finalizer
// through the namespaces/{name}/finalize subresource; the API server then
// deletes the namespace.
package namespace
