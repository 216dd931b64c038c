// Package iptables is skiff-proxy's iptables mode, after upstream
// kube-proxy's pkg/proxy/iptables.
//
// Write is a pure function from a Snapshot (ServicePorts and their
// endpoints, from package servicemap), the node-wide RuleOptions and a
// Plan to the input of one `iptables-restore --noflush` transaction for
// the filter and nat tables. Traffic enters through SKIFF-SERVICES (nat
// PREROUTING and OUTPUT jump to it): one rule per cluster IP, external IP
// and load balancer IP, then SKIFF-NODEPORTS for local destinations. A
// port's SKIFF-SVC- chain picks an endpoint with `-m statistic --mode
// random` (SKIFF-SVL- does the same over the node's own endpoints, for
// the Local traffic policies), SKIFF-EXT- handles external destinations
// (NodePorts, external and load balancer IPs), SKIFF-FW- applies
// loadBalancerSourceRanges, and each SKIFF-SEP- chain DNATs to one
// endpoint. SKIFF-MARK-MASQ marks what SKIFF-POSTROUTING masquerades. In
// the filter table, SKIFF-SERVICES and SKIFF-EXTERNAL-SERVICES reject
// traffic for ports without endpoints (and drop it for Local policies
// without local endpoints), SKIFF-FORWARD accepts marked and established
// forwarded traffic, SKIFF-PROXY-FIREWALL drops what SKIFF-FW- did not
// accept and SKIFF-FIREWALL drops martian traffic to 127.0.0.0/8.
//
// Proxier runs the syncs: the informers' handlers mark the Services whose
// Service or slices changed; a sync converts those again, rewrites the
// top-level chains and only the changed Services' chains (the others are
// left in the kernel, which --noflush allows), and deletes the chains no
// Service wants. Every --sync-period a full sync reads the kernel's tables
// with iptables-save, puts back missing jumps from the built-in chains
// (go-iptables), and rewrites every Service whose chains in the kernel do
// not hold exactly the wanted rules (RuleKey compares a rule as skiff
// writes it with the same rule as iptables-save prints it), repairing
// rules removed or changed by hand.
package iptables
