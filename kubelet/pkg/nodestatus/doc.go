// Package nodestatus registers the kubelet's Node and keeps it current:
// capacity and allocatable from the host, addresses, the well-known
// labels, nodeInfo with the container runtime's version, and a Ready
// condition that is true only when containerd answers and the pod network
// is configured. The status is sent every 10 s when it changed and at
// least every 5 minutes (upstream's nodeStatusReportFrequency); the Lease
// in kube-node-lease is renewed every 10 s. The manager also watches its
// own Node for spec.podCIDR, which configures the pod network.
package nodestatus
