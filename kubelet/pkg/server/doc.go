// Package server is the kubelet's own HTTPS API, the one the API server's
// pods/log, pods/exec and pods/portforward subresources proxy to, with
// upstream's paths:
//
//	GET /containerLogs/{namespace}/{pod}/{container}   (follow, tailLines, previous, timestamps, sinceSeconds, sinceTime, limitBytes)
//	GET /exec/{namespace}/{pod}/{container}?command=...&stdin=&stdout=&stderr=&tty=   (WebSocket)
//	GET /portForward/{namespace}/{pod}?port=...        (WebSocket)
//
// Every request must carry a client certificate that the cluster CA
// signed; only the API server's kubelet-client identity
// (CN kube-apiserver-kubelet-client) and members of system:masters are
// allowed. This stands in for upstream's SubjectAccessReview of
// nodes/proxy, nodes/log and friends.
//
// exec speaks the WebSocket channel protocols (v5.channel.k8s.io, with the
// close signal, and v4.channel.k8s.io and older): channel 0 stdin, 1 stdout,
// 2 stderr, 3 the error channel that ends with a metav1.Status (reason
// NonZeroExitCode and an ExitCode cause for a non-zero exit), 4 terminal
// resize. Port forwarding speaks upstream kubelet's WebSocket port-forward
// protocol: two channels per requested port (data, error), each starting
// with the port number as two little-endian bytes. SPDY is not served.
package server
