// Package serving is the HTTPS server every skiff daemon but the API server
// runs for its operators: /healthz, /livez and /readyz (with named readiness
// checks, each listed by /readyz?verbose) and /metrics from the daemon's own
// Prometheus registry.
//
// With a client CA configured, /metrics asks for a client certificate signed
// by it and then asks the API server, through a SubjectAccessReview, whether
// that user may "get" the path, as upstream's delegated authorization does,
// remembering an allowed answer for --authorization-webhook-cache-authorized-ttl
// and a denied one for --authorization-webhook-cache-unauthorized-ttl (10 s
// each, upstream's defaults) so that a scrape does not cost a review each;
// the health paths stay open to everyone, as upstream's
// --authorization-always-allow-paths leaves them.
package serving
