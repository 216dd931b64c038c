// Package e2e runs skiff-kubelet end to end: a containerd daemon of the
// test's own (temporary root, state and socket), runc, the CNI reference
// plugins, a docker-registry on loopback holding an image built from
// Debian's static busybox, and a real skiff API server (package
// test/harness starts them). The tests need root and skip when those
// programs are missing. Besides the pod lifecycle (TestKubelet) they cover
// the kubelet API with the API server's client certificate
// (TestKubeletAPI: logs, exec over WebSocket, port-forward), security
// contexts and OOMKilled (TestSecurityContext) and image pull secrets
// (TestImagePullSecret). TestMain lets containerd's shim start the test
// binary as the kubelet's logging driver.
package e2e
