// Package lifecycle runs the cluster-lifecycle controllers (garbage
// collector, namespace, node IPAM, node lifecycle, pod GC, service
// accounts, root CA publisher) against a real skiff-apiserver (embedded
// etcd, HTTPS on loopback) with Node objects and no kubelet: the tests
// play the kubelet's part (leases, node status) where one is needed.
package lifecycle
