// Package app is skiff-dns: CoreDNS's DNS server, linked as a library with
// a fixed set of its plugins (kubernetes, forward, cache, errors, log,
// health, ready, prometheus, loop, reload, loadbalance), serving the
// cluster's names as upstream's "Kubernetes DNS-Based Service Discovery"
// specifies them.
//
// Walkthrough: Setup loads the Corefile (--conf, or the built-in default
// that k3s's resembles, filled in from the flags) and builds a client
// with skiff-dns's own identity. Run starts CoreDNS's server from that
// Corefile, then keeps the kube-dns Service in kube-system (selector-less,
// at --cluster-ip) and this instance's EndpointSlice (kube-dns-<node>,
// pointing at --advertise-address) in place, and deletes the
// EndpointSlice again when it stops, so that the Service's endpoints are
// always the running instances.
//
// CoreDNS keeps its plugin registry, its Corefile loaders and its running
// instances in process-wide state; one skiff-dns server runs per process.
package app
