// Package drain cordons nodes and moves their pods off them as kubectl
// drain does: the pods on the node are sorted by the same filters
// (DaemonSet-managed, mirror, emptyDir, unmanaged), evicted through
// pods/eviction so PodDisruptionBudgets hold (a 429 is retried), or
// deleted with DisableEviction, and waited for until they are gone.
package drain
