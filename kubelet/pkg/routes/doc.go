// Package routes keeps the node's host routes to the other nodes' pod
// CIDRs (each node's podCIDR via its InternalIP, as DESIGN.md's network
// and upstream's kubenet/route controller arrange them) and the blackhole
// route for the whole cluster CIDR, under which the more specific pod
// routes lie, so that no packet for a cluster address without a pod
// leaves the machine.
package routes
