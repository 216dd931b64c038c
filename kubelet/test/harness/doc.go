// Package harness starts the real parts a kubelet needs for end-to-end
// tests and benchmarks: a containerd of its own (own root, state and
// socket), a docker-registry on loopback (optionally with a password),
// and a busybox image built from the host's static busybox. Everything it
// starts is stopped by the T's cleanups; Main gives a T to programs that
// are not tests.
package harness
