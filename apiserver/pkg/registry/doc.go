// Package registry is the API server's generic REST store and its resource
// table.
//
// One Store serves every resource: it turns a request into storage
// operations (create, get, list, compare-and-swap update, delete, watch) and
// applies what is common to all kinds (metadata system fields, generateName,
// resourceVersion preconditions, finalizers, graceful deletion). What differs
// between kinds lives in the kind's package under pkg/registry/<group>/<kind>:
// its strategies (PrepareForCreate, PrepareForUpdate, Validate,
// ValidateUpdate, reset fields), defaults, selectable fields, hooks (the
// Service IP allocator, a quota's status) and subresources (the proxy of
// pods, services and nodes; pods/log, exec, attach, portforward, eviction
// and binding; namespaces/finalize; serviceaccounts/token). The table in table.go lists every kind skiff serves,
// one row a kind naming its package's parts; resources.go defines a row
// (Resource) and its subresources. The REST endpoints, discovery and the
// OpenAPI documents are all built from the table, so adding a kind is one
// row and its package. A row with SharedStorage (events.k8s.io Events) is
// served from another row's storage through a converting storage.Interface
// (shared.go).
//
// A walkthrough of a create: the endpoint decodes the body into the kind's
// versioned type and calls Store.Create, which fills namespace, uid,
// creationTimestamp and a generated name, runs the defaults and the
// strategy's PrepareForCreate, validates (422 with every invalid field), and
// writes the object to /registry/<resource>/<namespace>/<name> only if that
// key is absent. The etcd revision of that write is the resourceVersion the
// client receives, and the same write reaches every watcher through the
// resource's cacher.
package registry
