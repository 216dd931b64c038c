// Package metricsserver is the resource metrics API (metrics.k8s.io/v1beta1
// NodeMetrics and PodMetrics, upstream's types from k8s.io/metrics) built
// into the API server, doing what upstream's metrics-server does behind
// the aggregation layer:
//
//   - every resolution (--metric-resolution, 15 s by default) it scrapes
//     /metrics/resource of each Ready node's kubelet through the API
//     server's kubelet client, all nodes at once;
//   - it keeps the last two points of each node and each container and
//     answers with the CPU rate between them (cumulative CPU seconds over
//     the window between their timestamps) and the last working set, as
//     metrics-server's storage does: a node or pod appears once it has two
//     points, a container that restarted (new start time) starts over, and
//     a node whose scrape failed is left out until it has two points again;
//   - it serves get and list of nodes, of pods in a namespace and of pods
//     in every namespace, with label and field selectors, in JSON, YAML or
//     protobuf, or as metrics-server's Table for kubectl get, under the
//     server's own authentication and authorization.
//
// Server.Handler serves the resource paths; Group and ResourceList are
// what the server's discovery lists for the group. The package reads the
// nodes and pods through functions the server gives it (its watch caches)
// and never writes anything.
package metricsserver
