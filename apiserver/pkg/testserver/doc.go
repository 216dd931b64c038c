// Package testserver starts a real skiff-apiserver for tests: fresh
// certificates from skiffctl's certs package, an embedded etcd in a temporary
// directory, HTTPS on a random loopback port. StartTestServer returns when
// the server is ready and the system namespaces exist, and registers a
// teardown that stops everything it started.
package testserver
