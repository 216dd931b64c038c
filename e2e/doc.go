// Package e2e holds skiff's whole-cluster end-to-end tests: every daemon
// (API server on an embedded etcd, controller manager, scheduler, kubelet
// on a real containerd, proxy) in one test process, inside a network
// namespace of the test's own, so that the iptables rules, routes, bridge
// and pod addresses the daemons make are the test's alone and disappear
// with it. The tests drive the cluster as a user does, with the real
// kubectl, and check what a user checks: that a Service answers.
//
// The network namespace: TestMain re-executes the test binary under
// `unshare --net`. Inside it the "node" has a loopback and an uplink, one
// end of a veth pair whose other end sits in a second namespace the test
// makes, standing for the world outside the machine; the node's default
// route points there. A packet that would leave a real machine arrives
// there instead, where the tests count it.
package e2e
