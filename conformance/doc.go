// Package conformance holds the tools of `make conformance`, which runs
// upstream Kubernetes' conformance suite (e2e.test, built from the Go module
// proxy by build.sh) against a running skiff cluster:
//
//   - cmd/images builds the images the conformance tests pull (agnhost and
//     nnp from upstream's Go packages, busybox from Debian's busybox-static,
//     dig from Debian's bind9-dnsutils, pause from cmd/pause) as OCI layouts
//     and pushes them under upstream's paths into a registry on loopback;
//   - cmd/pause is the sandbox-style pause program of the pause image;
//   - cmd/summary reads the JUnit reports of a run and writes
//     docs/conformance.md.
//
// See docs/conformance.md and conformance/run.sh.
package conformance
