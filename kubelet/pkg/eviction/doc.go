// Package eviction is the kubelet's eviction manager: it watches the node's
// resources (memory, the node and image filesystems, process IDs), reports
// the MemoryPressure, DiskPressure and PIDPressure node conditions, refuses
// pods that would make pressure worse, and evicts one pod per pass while a
// hard eviction threshold is met, the way upstream's kubelet does
// (pkg/kubelet/eviction of Kubernetes v1.32).
//
// A pass (Manager.Synchronize, every 10 s from Manager.Start):
//
//  1. Signals.Observe reads the node: memory.available, nodefs.available,
//     nodefs.inodesFree, imagefs.available, imagefs.inodesFree and
//     pid.available, each with its capacity.
//  2. Every threshold whose available amount is below its quantity (a
//     percentage is taken of the capacity) is met. Met thresholds map to
//     node conditions; a condition stays True until it has not been observed
//     for the pressure transition period (5 minutes by default).
//  3. If a threshold is met, the one to act on is chosen (memory first), and
//     for disk signals node-level resources are reclaimed first: unused
//     containers, then unused images. If the threshold is no longer met
//     after that, no pod is evicted.
//  4. Otherwise the active pods are ranked (memory: pods using more than
//     they request first, then lower priority, then the usage above the
//     request; disk the same with ephemeral storage or inodes; PIDs: lower
//     priority, then more processes) and the first pod that is not critical
//     is handed to the Evict callback with upstream's reason and message.
//
// Everything the manager needs from the rest of the kubelet comes through
// the callbacks in Options, so it can be tested with fakes and wired without
// knowing the runtime.
package eviction
