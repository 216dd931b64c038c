// Package netnstest runs a test binary (or a benchmark program) in a
// network namespace of its own, so that every iptables, route, link and
// conntrack change it makes applies to a fresh namespace that disappears
// with the process and never to the host's. Main re-executes the binary
// under `unshare --net` (util-linux) with an environment marker when run
// as root; tests that need the namespace call Require, which skips them
// elsewhere.
package netnstest
