// Package netsafety installs what keeps cluster traffic on the machine
// whether or not any Service rule exists yet, and removes it again:
//
//   - the service CIDR is routed to a dummy interface (skiff-svc0, up, no
//     address; route protocol 115): a packet for a cluster IP that no
//     DNAT rule rewrote is dropped there instead of following the default
//     route, while DNAT, which happens before routing, still works and a
//     connect() from the host still finds a route (a blackhole or
//     unreachable route would fail it before OUTPUT DNAT);
//   - the egress guard, filter chain SKIFF-EGRESS-GUARD jumped to first
//     from FORWARD: forwarded traffic from the cluster CIDR, or to the
//     cluster or service CIDR, may leave only through the allowed
//     interfaces (the node's bridge, multi-node links) and is dropped
//     otherwise; meant for test machines, turned off on real deployments;
//   - the sysctls the proxy needs (ip_forward, bridge-nf-call-iptables,
//     route_localnet).
//
// Everything acts on the network namespace of the calling thread, so
// tests use it in a namespace of their own.
package netsafety
