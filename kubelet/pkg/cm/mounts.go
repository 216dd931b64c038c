package cm

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Hierarchy is one mounted cgroup hierarchy: a v1 hierarchy with its
// controllers, or the unified v2 one.
type Hierarchy struct {
	Path        string
	Unified     bool
	Controllers []string
}

func (h Hierarchy) has(controller string) bool {
	for _, c := range h.Controllers {
		if c == controller {
			return true
		}
	}
	return false
}

// DiscoverHierarchies reads the cgroup mounts from mountinfo
// (/proc/self/mountinfo). When v1 hierarchies exist, they carry the
// controllers (a v2 mount beside them, as on a hybrid system, is kept
// only so that pod cgroups created there are removed too).
func DiscoverHierarchies(mountinfo string) ([]Hierarchy, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hs []Hierarchy
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+3 > len(fields) {
			continue
		}
		mountPoint, fsType := fields[4], fields[sep+1]
		switch fsType {
		case "cgroup2":
			hs = append(hs, Hierarchy{Path: mountPoint, Unified: true})
		case "cgroup":
			var ctrls []string
			for _, o := range strings.Split(fields[sep+3], ",") {
				switch o {
				case "cpu", "cpuacct", "cpuset", "memory", "pids", "blkio", "devices", "freezer", "hugetlb", "net_cls", "net_prio", "perf_event", "rdma", "misc":
					ctrls = append(ctrls, o)
				default:
					if strings.HasPrefix(o, "name=") {
						ctrls = append(ctrls, o)
					}
				}
			}
			hs = append(hs, Hierarchy{Path: mountPoint, Controllers: ctrls})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("no cgroup filesystem is mounted (%s)", mountinfo)
	}
	return hs, nil
}
