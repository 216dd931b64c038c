// Package integration runs skiff-scheduler against a real skiff-apiserver
// (embedded etcd, HTTPS on loopback) with Node objects and no kubelet: the
// scheduler authenticates as system:kube-scheduler with its own client
// certificate, holds the kube-system/kube-scheduler Lease, and binds pods.
package integration
