// Package nodeipam holds the node IPAM controller (upstream's range
// allocator): every Node gets spec.podCIDR and spec.podCIDRs, one subnet of
// the node mask size from each cluster CIDR (one for single stack, two for
// dual stack), never the same subnet twice. A node that already has a
// podCIDR keeps it; on start the allocation is rebuilt from the nodes'
// podCIDRs before any new one is handed out; a deleted node's subnets are
// released. When a cluster CIDR is exhausted the node gets a
// CIDRNotAvailable event; when the patch fails, CIDRAssignmentFailed.
//
// CIDRSet is the allocator of one cluster CIDR: a bitmap of its subnets.
package nodeipam
