// Package kubeletclient is how the API server reaches a node's kubelet for
// the pod subresources that live there (log, exec, attach, portforward):
// an HTTPS transport that presents the API server's kubelet client
// certificate and verifies the kubelet's serving certificate, and the
// kubelet's location taken from the Node object, as upstream's
// NodeConnectionInfoGetter picks it (the first address of the preferred
// types; the port from status.daemonEndpoints).
package kubeletclient
