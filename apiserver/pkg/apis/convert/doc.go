// Package convert converts between the two versions of one stored kind that
// skiff serves from the same storage: core/v1 Event and events.k8s.io/v1
// Event. Upstream converts both through its internal Event type; skiff has
// no internal types, so the mapping of fields is written out here, field by
// field as upstream's conversion functions do.
package convert
