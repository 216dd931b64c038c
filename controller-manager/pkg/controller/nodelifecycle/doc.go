// Package nodelifecycle holds the node lifecycle controller and the
// taint-based eviction that goes with it.
//
// Health: every --node-monitor-period the controller looks at each node's
// Ready condition and its Lease in kube-node-lease. When neither changed
// for --node-monitor-grace-period (--node-startup-grace-period for a node
// that never posted a status), all of the node's conditions turn Unknown
// (reason NodeStatusUnknown, "Kubelet stopped posting node status."), the
// node gets a NodeNotReady event and its pods' Ready condition turns False.
//
// Taints: the NoSchedule taints follow the conditions
// (node.kubernetes.io/not-ready when Ready=False, unreachable when
// Unknown, memory-pressure, disk-pressure, pid-pressure,
// network-unavailable, and unschedulable for spec.unschedulable). The
// NoExecute not-ready and unreachable taints are added through a rate
// limiter, one token bucket per zone (label topology.kubernetes.io/region
// and zone): --node-eviction-rate nodes per second when the zone is
// healthy, --secondary-node-eviction-rate when more than
// --unhealthy-zone-threshold of its nodes (and at least three) are not
// Ready and the zone has more than --large-cluster-size-threshold nodes,
// and zero for such a small zone. When every node of every zone is not
// Ready (full disruption), the controller stops tainting and removes the
// NoExecute taints it put: the problem is likely on the control plane's
// side. Taints are removed as soon as the node is Ready again.
//
// Eviction: a pod on a node with NoExecute taints is deleted (event
// TaintManagerEviction, condition DisruptionTarget) at once when it does
// not tolerate one of them, after the smallest tolerationSeconds of its
// matching tolerations otherwise (counted from when the controller first
// saw the pod under those taints), and never when it tolerates them all
// forever.
//
// The clock is injected so tests step time instead of waiting.
package nodelifecycle
