// Package tainttoleration holds the TaintToleration plugin: it filters out
// nodes with a NoSchedule or NoExecute taint that the pod does not
// tolerate, and prefers nodes with fewer untolerated PreferNoSchedule taints.
package tainttoleration
