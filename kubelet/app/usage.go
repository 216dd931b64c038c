package app

import (
	"context"
	"path"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/cm"
	"skiff.dev/kubelet/pkg/eviction"
	"skiff.dev/kubelet/pkg/pod"
)

// podUsage reads what a pod uses for the eviction manager: memory and
// processes from its cgroup and its containers', disk from its volume and
// log directories. The containers' writable layers are not measured.
type podUsage struct {
	cgroups *cm.Manager
	runtime pod.Runtime
	rootDir string
}

func (u *podUsage) usage(ctx context.Context, p *corev1.Pod) (eviction.PodUsage, bool) {
	cg := u.cgroups.PodCgroup(p)
	ws, err := u.cgroups.MemoryWorkingSet(cg)
	if err != nil {
		klog.FromContext(ctx).V(4).Info("No memory usage for pod", "pod", klog.KObj(p), "err", err)
		return eviction.PodUsage{}, false
	}
	out := eviction.PodUsage{MemoryWorkingSet: uint64(ws)}
	if n, err := u.cgroups.Processes(cg); err == nil {
		out.Processes = uint64(n)
	}
	out.VolumesBytes, out.VolumesInodes, _ = eviction.DiskUsage(filepath.Join(u.rootDir, "pods", string(p.UID)))
	containers, err := u.runtime.ListContainers(ctx, p.UID)
	if err != nil {
		return out, true
	}
	for _, c := range containers {
		if c.State != pod.StateRunning {
			continue
		}
		cu := eviction.ContainerUsage{Name: c.Name()}
		if ws, err := u.cgroups.MemoryWorkingSet(path.Join(cg, c.ID)); err == nil {
			cu.MemoryWorkingSet = uint64(ws)
		}
		cu.LogsBytes, cu.LogsInodes, _ = eviction.DiskUsage(filepath.Join(u.rootDir, "logs", string(p.UID), c.Name()))
		out.Containers = append(out.Containers, cu)
	}
	return out, true
}
