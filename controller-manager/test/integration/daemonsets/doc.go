// Package daemonsets holds the integration tests and the benchmark of the
// DaemonSet controller: a real API server (testserver) and the real
// controller manager (cmtest) running the daemonset controller, with the
// tests playing the scheduler (binding each daemon pod to the node its
// metadata.name affinity names) and the kubelet (pod status).
package daemonsets
