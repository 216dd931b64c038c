package stats

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"skiff.dev/kubelet/pkg/cm"
)

// Usage is one reading of a cgroup.
type Usage struct {
	Time time.Time
	// CPU is the cumulative CPU time, in nanoseconds.
	CPU uint64
	// Memory is the memory in use, page cache included; WorkingSet is
	// Memory less the inactive file pages (what the kernel would reclaim
	// last), as cAdvisor's.
	Memory, WorkingSet uint64
	// RSS is the anonymous memory (v1 total_rss, v2 anon).
	RSS uint64
	// MemoryLimit is the cgroup's memory limit; 0 for none.
	MemoryLimit uint64
	// PageFaults and MajorPageFaults, when HasFaults.
	PageFaults, MajorPageFaults uint64
	HasFaults                   bool
	// Processes is the number of tasks, when HasProcesses.
	Processes    uint64
	HasProcesses bool
}

// Cgroups reads cgroups' CPU and memory counters.
type Cgroups struct {
	// v1 mount points by controller; unified is the v2 mount when the
	// controllers are there (no v1 memory hierarchy), as package cm
	// decides.
	v1      map[string]string
	unified string
	// procDir is /proc: the v2 root cgroup has no memory.current, and its
	// memory is read from meminfo, as runc does.
	procDir string
}

// NewCgroups reads the cgroups of the given hierarchies
// (cm.DiscoverHierarchies), with procDir as /proc.
func NewCgroups(hs []cm.Hierarchy, procDir string) (*Cgroups, error) {
	c := &Cgroups{v1: map[string]string{}, procDir: procDir}
	var unified string
	for _, h := range hs {
		if h.Unified {
			unified = h.Path
			continue
		}
		for _, ctl := range h.Controllers {
			c.v1[ctl] = h.Path
		}
	}
	if c.v1["memory"] == "" {
		if unified == "" {
			return nil, errors.New("neither a v1 memory hierarchy nor a unified cgroup hierarchy is mounted")
		}
		c.unified = unified
	} else if c.v1["cpuacct"] == "" {
		return nil, errors.New("no v1 cpuacct hierarchy is mounted")
	}
	return c, nil
}

// Read reads a cgroup ("/" for the root, the node's).
func (c *Cgroups) Read(cgroup string, now time.Time) (Usage, error) {
	u := Usage{Time: now}
	var err error
	if c.unified != "" {
		err = c.readV2(cgroup, &u)
	} else {
		err = c.readV1(cgroup, &u)
	}
	return u, err
}

func (c *Cgroups) readV1(cgroup string, u *Usage) error {
	var err error
	if u.CPU, err = readUint(filepath.Join(c.v1["cpuacct"], cgroup, "cpuacct.usage")); err != nil {
		return err
	}
	dir := filepath.Join(c.v1["memory"], cgroup)
	if u.Memory, err = readUint(filepath.Join(dir, "memory.usage_in_bytes")); err != nil {
		return err
	}
	st, err := readKeyed(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return err
	}
	u.WorkingSet = workingSet(u.Memory, st["total_inactive_file"])
	u.RSS = st["total_rss"]
	u.PageFaults, u.MajorPageFaults, u.HasFaults = st["total_pgfault"], st["total_pgmajfault"], true
	// An unlimited v1 cgroup reports a limit near 2^63.
	if limit, err := readUint(filepath.Join(dir, "memory.limit_in_bytes")); err == nil && limit < 1<<62 {
		u.MemoryLimit = limit
	}
	if pids := c.v1["pids"]; pids != "" && cgroup != "/" {
		if n, err := readUint(filepath.Join(pids, cgroup, "pids.current")); err == nil {
			u.Processes, u.HasProcesses = n, true
		}
	}
	return nil
}

func (c *Cgroups) readV2(cgroup string, u *Usage) error {
	dir := filepath.Join(c.unified, cgroup)
	cpu, err := readKeyed(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return err
	}
	u.CPU = cpu["usage_usec"] * 1000
	if cgroup == "/" {
		// The root has no memory.current: MemTotal - MemFree, as runc's
		// rootStatsFromMeminfo.
		mi, err := readKeyed(filepath.Join(c.procDir, "meminfo"))
		if err != nil {
			return err
		}
		const kiB = 1024
		u.Memory = (mi["MemTotal:"] - mi["MemFree:"]) * kiB
		u.WorkingSet = workingSet(u.Memory, mi["Inactive(file):"]*kiB)
		u.RSS = mi["AnonPages:"] * kiB
		return nil
	}
	if u.Memory, err = readUint(filepath.Join(dir, "memory.current")); err != nil {
		return err
	}
	st, err := readKeyed(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return err
	}
	u.WorkingSet = workingSet(u.Memory, st["inactive_file"])
	u.RSS = st["anon"]
	u.PageFaults, u.MajorPageFaults, u.HasFaults = st["pgfault"], st["pgmajfault"], true
	if limit, err := readUint(filepath.Join(dir, "memory.max")); err == nil {
		u.MemoryLimit = limit // "max" does not parse: no limit
	}
	if n, err := readUint(filepath.Join(dir, "pids.current")); err == nil {
		u.Processes, u.HasProcesses = n, true
	}
	return nil
}

// workingSet is usage less the inactive file pages, never below 0.
func workingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile > usage {
		return 0
	}
	return usage - inactiveFile
}

func readUint(file string) (uint64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// readKeyed reads a file of "key value [unit]" lines (memory.stat,
// cpu.stat, meminfo) into a map; lines whose value is not a number are
// left out.
func readKeyed(file string) (map[string]uint64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		if v, err := strconv.ParseUint(fields[1], 10, 64); err == nil {
			out[fields[0]] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return out, nil
}

// isGone says whether err means the cgroup no longer (or not yet) exists.
func isGone(err error) bool { return errors.Is(err, fs.ErrNotExist) }
