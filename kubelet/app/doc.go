// Package app is skiff-kubelet's daemon: Options (flags), Setup (builds the
// containerd runtime, the CNI network, the pod lifecycle, the node status
// manager, the metrics and the HTTPS listener) and Run (registers the node,
// then runs the node status and lease loop, the pods and the /healthz,
// /readyz and /metrics server together until the context ends).
package app
