// Package servicemap turns Services and EndpointSlices into what the proxy
// programs: one ServicePort per (Service, port) and, for each, the
// endpoints the slices list for it with their readiness, serving and
// terminating conditions and node. It decides which Services the proxy
// ignores (headless, ExternalName, those claimed by another proxy through
// the service.kubernetes.io/service-proxy-name label) and rejects with an
// error what it cannot program (an unknown protocol, a port out of range,
// an address of the wrong family), so that the caller can skip that one
// object and report it. Categorize picks, as upstream's
// pkg/proxy/topology.go does, the endpoints that cluster-wide and
// node-local traffic policies use, falling back to serving and terminating
// endpoints when none is ready.
package servicemap
