// Package endpoints is the API server's HTTP layer: it installs gorilla/mux
// routes for every row of the resource table, negotiates media types (JSON,
// YAML, protobuf, and the Table and PartialObjectMetadata views kubectl and
// client-go ask for), decodes and size-limits request bodies, applies the
// three patch types, streams watches, serves discovery, and turns every
// error into a metav1.Status in one function (errors.go).
package endpoints
