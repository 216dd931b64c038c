// Package nodeunschedulable holds the NodeUnschedulable filter: a cordoned
// node (spec.unschedulable) takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.
package nodeunschedulable
