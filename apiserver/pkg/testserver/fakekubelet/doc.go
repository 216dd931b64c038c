// Package fakekubelet is a stand-in for a node's kubelet in API server
// tests: an HTTPS server on 127.0.0.1 with a serving certificate from the
// test PKI's CA that requires the API server's kubelet client certificate,
// and serves the kubelet paths the API server proxies to
// (/containerLogs and /exec over WebSocket), recording what it received.
package fakekubelet
