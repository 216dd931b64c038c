// Package api builds the runtime.Scheme and codecs that skiff-apiserver uses to
// decode request bodies, encode responses and store objects in etcd. It serves
// exactly one version per group (the versioned k8s.io/api types), so no
// internal versions or conversions are involved: what a client sends is what
// is defaulted, validated and stored.
package api
