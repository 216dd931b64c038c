// Package integration tests the kubelet's TLS bootstrap and certificate
// rotation against a real API server (on its embedded etcd) and the real
// controller manager, with the join command 'skiffctl token create' prints.
package integration
