// Package server is the kubelet's own HTTPS API, the one the API server's
// pods/log, pods/exec, pods/attach and pods/portforward subresources proxy
// to, with upstream's paths:
//
//	GET /containerLogs/{namespace}/{pod}/{container}   (follow, tailLines, previous, timestamps, sinceSeconds, sinceTime, limitBytes)
//	GET /exec/{namespace}/{pod}/{container}?command=...&stdin=&stdout=&stderr=&tty=   (WebSocket or SPDY)
//	GET /attach/{namespace}/{pod}/{container}?stdin=&stdout=&stderr=&tty=   (WebSocket or SPDY)
//	GET /portForward/{namespace}/{pod}[?port=...]      (SPDY, SPDY in a WebSocket, or WebSocket)
//	GET /stats/summary, /metrics/resource, /metrics/cadvisor   (package stats)
//
// Every request must carry a client certificate that the cluster CA
// signed, or a bearer token that a TokenReview to the API server
// authenticates (upstream's --authentication-token-webhook). The API
// server's kubelet-client identity (CN kube-apiserver-kubelet-client) and
// members of system:masters (by certificate) are allowed; any other user is allowed what a SubjectAccessReview of
// nodes/proxy, nodes/metrics, nodes/stats or nodes/log on this node allows
// it, as upstream's --authorization-mode Webhook, with the reviews'
// answers cached as upstream's kubelet caches them (auth.go, authcache.go).
//
// exec speaks the WebSocket channel protocols (v5.channel.k8s.io, with the
// close signal, and v4.channel.k8s.io and older): channel 0 stdin, 1 stdout,
// 2 stderr, 3 the error channel that ends with a metav1.Status (reason
// NonZeroExitCode and an ExitCode cause for a non-zero exit), 4 terminal
// resize. After an "Upgrade: SPDY/3.1" it speaks upstream's SPDY
// remotecommand protocols instead (v4.channel.k8s.io, v3, v2 and
// channel.k8s.io, what client-go's SPDY executor and upstream's e2e
// framework use): the client creates one stream per channel, named by its
// streamType header (error, stdin, stdout, stderr, resize from v3 on);
// the error stream carries the status as JSON in v4 and as text before.
// streams.go hides the difference from exec and attach. attach speaks
// the same protocols; it streams the container's output as its log file
// receives it, from the attach on, and cannot reach the container's stdin
// (see attach).
//
// Port forwarding speaks what upstream's kubelet and kubectl speak: SPDY
// (portforward.k8s.io) after an "Upgrade: SPDY/3.1", the same SPDY carried
// in a WebSocket with subprotocol SPDY/3.1+portforward.k8s.io (kubectl's
// default since 1.31; tunnel.go is the WebSocket side of it), where each
// forwarded connection is a pair of streams (data and error) named by a
// requestID header; and the WebSocket channel protocol, two channels per
// port of the query (data, error), each starting with the port number as
// two little-endian bytes.
package server
