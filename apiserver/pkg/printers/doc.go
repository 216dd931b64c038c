/*
Package printers turns API objects into the server-side tables that
`kubectl get` asks for (Accept: application/json;as=Table;g=meta.k8s.io;v=v1).

Upstream Kubernetes prints from its internal types in
k8s.io/kubernetes/pkg/printers/internalversion; skiff keeps only the versioned
k8s.io/api types, so package tables re-implements the same column definitions and
cell logic against those types, one Kind per kind, and each kind's row of the
resource table (package registry) names its Kind. The goal is byte-for-byte the same columns, cell
values, cell types and row conditions that a v1.32 kube-apiserver returns, so
that kubectl (and anything else that renders tables) cannot tell the difference.

Walkthrough:

  - New builds a Printer from the resource table: for each row that names a
    Kind, one handler for the kind and one for its list. A handler is a list of
    column definitions plus a function that turns one object into one row.
    Nothing is registered globally.
  - Printer.Table looks the object's Go type up. Like the kube-apiserver, it
    always prints the "wide" form: every column, including those with
    Priority 1 that kubectl shows only with -o wide.
  - Kinds without a handler (for example Role and ClusterRole, which upstream
    does not print either) get the default table of k8s.io/apiserver's
    registry/rest: NAME and CREATED AT.
  - Ages are computed against an injectable clock (WithClock) so tests can pin
    them.

The caller is responsible for replacing each row's Object with
PartialObjectMetadata (or the full object) according to the request's
includeObject parameter, and for the Table's TypeMeta if it serves
meta.k8s.io/v1beta1.
*/
package printers
