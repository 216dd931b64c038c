// Package api builds the runtime.Scheme and codecs that skiff-apiserver uses to
// decode request bodies, encode responses and store objects in etcd. It serves
// exactly one version per group (the versioned k8s.io/api types), so no
// internal versions or conversions are involved: what a client sends is what
// is defaulted, validated and stored. The one exception is events.k8s.io/v1
// Event, stored as the core/v1 Event it is another view of (package
// apis/convert maps the fields).
package api
