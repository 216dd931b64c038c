// Package containerd implements the pod lifecycle's Runtime with
// containerd's Go client, in one containerd namespace per kubelet. A
// container's pod, name and restart attempt are containerd labels; so are
// its start time and, once its task has exited and been deleted, its exit
// code and finish time, so a restarted kubelet finds the full picture
// again.
package containerd
