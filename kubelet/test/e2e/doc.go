// Package e2e runs skiff-kubelet end to end: a containerd daemon of the
// test's own (temporary root, state and socket), runc, the CNI reference
// plugins, a docker-registry on loopback holding an image built from
// Debian's static busybox, and a real skiff API server. The tests need
// root and skip when those programs are missing.
package e2e
