// Package integration drives a real skiff-apiserver on a real (embedded)
// etcd through raw HTTPS requests and client-go: storage layout, errors,
// authentication, lists, watches and the subresources.
package integration
