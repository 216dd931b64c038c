// Package cni implements the pod lifecycle's Network with libcni and the
// CNI reference plugins. Once the node has a pod CIDR the kubelet writes a
// conflist (bridge with host-local IPAM on that CIDR, isGateway, no IP
// masquerade, then portmap) and loads it. Each pod gets a network
// namespace pinned at <netns dir>/skiff-<pod uid>, the loopback plugin and
// the conflist are ADDed in it, and libcni's result cache lets a restarted
// kubelet find a pod's address again without a new ADD.
package cni
