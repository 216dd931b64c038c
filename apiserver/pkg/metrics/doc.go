// Package metrics holds the API server's Prometheus metrics, on the server's
// own registry, under the names Kubernetes users already scrape.
package metrics
