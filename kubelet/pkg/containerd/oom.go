package containerd

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/containerd/containerd"
)

// cgroupRoot is where the cgroup filesystems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// oomKilled says whether the kernel's OOM killer killed a process in the
// container's memory cgroup: the oom_kill count of memory.oom_control
// (cgroup v1) or memory.events (v2). It must be asked before the task is
// deleted, which removes the cgroup.
func (r *Runtime) oomKilled(ctx context.Context, c containerd.Container) bool {
	spec, err := c.Spec(ctx)
	if err != nil || spec.Linux == nil || spec.Linux.CgroupsPath == "" {
		return false
	}
	for _, f := range []string{
		filepath.Join(cgroupRoot, "memory", spec.Linux.CgroupsPath, "memory.oom_control"),
		filepath.Join(cgroupRoot, spec.Linux.CgroupsPath, "memory.events"),
	} {
		if n, ok := readCounter(f, "oom_kill"); ok {
			return n > 0
		}
	}
	return false
}

// readCounter reads "<key> <n>" from a cgroup key/value file.
func readCounter(path, key string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 2 && string(f[0]) == key {
			n, err := strconv.ParseInt(string(f[1]), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
