// Package integration runs skiffctl's verbs against a real skiff-apiserver
// (skiff.dev/apiserver/pkg/testserver: HTTPS, client certificates, an
// embedded etcd), and compares what skiffctl apply stores with what the
// real kubectl (/usr/bin/kubectl) stores for the same manifests.
package integration
