// Package server assembles skiff-apiserver: etcd (embedded or external), the
// generic stores and their watch caches for every row of the resource table,
// the REST, discovery, OpenAPI and health endpoints behind authentication
// and metrics, the bootstrap objects (system namespaces, the kubernetes
// Service and its endpoints) and the etcd compactor. Setup builds it all;
// Run starts every long-running part in one errgroup and stops them by
// cancelling the context.
package server
