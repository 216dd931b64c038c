package eviction

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signals observes the node's eviction signals.
type Signals interface {
	Observe(ctx context.Context) (Observations, error)
}

// NodeSignals reads the signals from the host.
//
// memory.available is upstream's definition, capacity minus working set,
// with the node's working set taken from /proc/meminfo as cAdvisor does for
// the root cgroup on cgroup v2: usage = MemTotal - MemFree, working set =
// usage - Inactive(file) (never below 0). This counts kernel memory and the
// active page cache as used, like the root cgroup's memory.current.
//
// nodefs is the filesystem of RootDir (the kubelet's root directory) and
// imagefs that of ImageFSDir (containerd's root); available is what an
// unprivileged user may use (f_bavail), as upstream reports it.
//
// pid.available is min(pid_max, threads-max) minus the number of tasks on
// the host (the total in /proc/loadavg), as upstream's pidlimit package.
type NodeSignals struct {
	RootDir    string
	ImageFSDir string
	// ProcDir is /proc unless set (tests use fixtures).
	ProcDir string
}

var _ Signals = (*NodeSignals)(nil)

// Observe implements Signals.
func (n *NodeSignals) Observe(ctx context.Context) (Observations, error) {
	obs := Observations{Signals: map[Signal]Observation{}}
	mem, err := ReadMemory(n.proc("meminfo"))
	if err != nil {
		return obs, err
	}
	obs.Signals[SignalMemoryAvailable] = mem
	nodeFS, err := statFS(n.RootDir)
	if err != nil {
		return obs, fmt.Errorf("nodefs: %w", err)
	}
	obs.Signals[SignalNodeFsAvailable], obs.Signals[SignalNodeFsInodesFree] = nodeFS.bytes(), nodeFS.inodes()
	imageFS, err := statFS(n.ImageFSDir)
	if err != nil {
		return obs, fmt.Errorf("imagefs: %w", err)
	}
	obs.Signals[SignalImageFsAvailable], obs.Signals[SignalImageFsInodesFree] = imageFS.bytes(), imageFS.inodes()
	obs.DedicatedImageFS = nodeFS.dev != imageFS.dev
	pids, err := ReadPIDs(n.proc("sys/kernel/pid_max"), n.proc("sys/kernel/threads-max"), n.proc("loadavg"))
	if err != nil {
		return obs, err
	}
	obs.Signals[SignalPIDAvailable] = pids
	return obs, nil
}

func (n *NodeSignals) proc(name string) string {
	dir := n.ProcDir
	if dir == "" {
		dir = "/proc"
	}
	return filepath.Join(dir, name)
}

// ReadMemory computes memory.available from a /proc/meminfo file.
func ReadMemory(path string) (Observation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Observation{}, err
	}
	fields, err := parseMeminfo(data)
	if err != nil {
		return Observation{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range []string{"MemTotal", "MemFree", "Inactive(file)"} {
		if _, ok := fields[k]; !ok {
			return Observation{}, fmt.Errorf("%s: no %s", path, k)
		}
	}
	total := fields["MemTotal"]
	usage := total - min(fields["MemFree"], total)
	workingSet := usage - min(fields["Inactive(file)"], usage)
	return Observation{
		Capacity:  resource.NewQuantity(int64(total), resource.BinarySI),
		Available: resource.NewQuantity(int64(total-workingSet), resource.BinarySI),
	}, nil
}

// parseMeminfo returns the fields of /proc/meminfo in bytes.
func parseMeminfo(data []byte) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", key, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		out[key] = v
	}
	return out, sc.Err()
}

// ReadPIDs computes pid.available from pid_max, threads-max and loadavg.
func ReadPIDs(pidMaxPath, threadsMaxPath, loadavgPath string) (Observation, error) {
	pidMax, err := readUint(pidMaxPath)
	if err != nil {
		return Observation{}, err
	}
	if threadsMax, err := readUint(threadsMaxPath); err == nil && threadsMax < pidMax {
		pidMax = threadsMax
	}
	data, err := os.ReadFile(loadavgPath)
	if err != nil {
		return Observation{}, err
	}
	f := strings.Fields(string(data))
	if len(f) < 4 {
		return Observation{}, fmt.Errorf("%s: unexpected content %q", loadavgPath, data)
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return Observation{}, fmt.Errorf("%s: unexpected field %q", loadavgPath, f[3])
	}
	tasks, err := strconv.ParseUint(total, 10, 64)
	if err != nil {
		return Observation{}, fmt.Errorf("%s: %w", loadavgPath, err)
	}
	return Observation{
		Capacity:  resource.NewQuantity(int64(pidMax), resource.DecimalSI),
		Available: resource.NewQuantity(int64(pidMax)-int64(tasks), resource.DecimalSI),
	}, nil
}

func readUint(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

type fsStats struct {
	dev                               uint64
	capacity, available, files, ifree uint64
}

func statFS(path string) (fsStats, error) {
	if path == "" {
		return fsStats{}, fmt.Errorf("no path given")
	}
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		return fsStats{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fsStats{}, fmt.Errorf("stat %s: %w", path, err)
	}
	bs := uint64(s.Bsize)
	return fsStats{
		dev:      uint64(st.Dev),
		capacity: s.Blocks * bs, available: s.Bavail * bs,
		files: s.Files, ifree: s.Ffree,
	}, nil
}

func (f fsStats) bytes() Observation {
	return Observation{
		Capacity:  resource.NewQuantity(int64(f.capacity), resource.BinarySI),
		Available: resource.NewQuantity(int64(f.available), resource.BinarySI),
	}
}

func (f fsStats) inodes() Observation {
	return Observation{
		Capacity:  resource.NewQuantity(int64(f.files), resource.DecimalSI),
		Available: resource.NewQuantity(int64(f.ifree), resource.DecimalSI),
	}
}
