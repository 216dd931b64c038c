// Package endpoints is the Endpoints controller: for every Service with a
// selector it keeps the core/v1 Endpoints object of the same name listing
// the Service's pods, as upstream's pkg/controller/endpoint does.
//
// Walkthrough: Service events, pod events (after
// --endpoint-updates-batch-period) and deletions of Endpoints put a Service
// key on a rate-limited work queue. A sync reads the Service and its pods
// from the caches and builds one subset per pod and port (named targetPorts
// resolved per pod): the pod's address of the Service's IP family, with
// nodeName, targetRef and, when its subdomain names the Service, hostname,
// under addresses when the pod is Ready (or the Service publishes
// not-ready addresses) and under notReadyAddresses otherwise; terminating
// pods are left out unless not-ready addresses are published. RepackSubsets
// packs them into the canonical form, so an unchanged Service compares
// equal and writes nothing. The Endpoints gets the Service's labels,
// service.kubernetes.io/headless for a headless Service,
// endpoints.kubernetes.io/managed-by: endpoint-controller, the
// endpoints.kubernetes.io/last-change-trigger-time annotation, and, past
// 1000 addresses, is truncated (ready addresses kept first) and annotated
// endpoints.kubernetes.io/over-capacity: truncated. When the Service goes,
// its Endpoints is deleted if this controller wrote it (the managed-by
// label); at start, every managed Endpoints is checked once for a missing
// Service. Services without a selector (the API server's "kubernetes"
// among them) and ExternalName Services are left alone.
package endpoints
