package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machineSummary describes where the figures were taken.
func machineSummary() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "date:     %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&sb, "cpu:      %s\n", procField("/proc/cpuinfo", "model name"))
	fmt.Fprintf(&sb, "cores:    %d\n", runtime.NumCPU())
	fmt.Fprintf(&sb, "memory:   %s\n", procField("/proc/meminfo", "MemTotal"))
	fmt.Fprintf(&sb, "go:       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&sb, "kernel:   %s\n", kernel())
	fmt.Fprintf(&sb, "iptables: %s\n", iptablesVersion())
	fmt.Fprintf(&sb, "load:     %s", loadavg())
	return sb.String()
}

func procField(path, key string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// cpuSample is the machine's busy CPU time and the CPU time of this
// process and its children (iptables-restore, iptables-save) at one
// moment: the figures are only comparable on an otherwise idle machine.
type cpuSample struct {
	at         time.Time
	busy, self time.Duration
}

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		for i, v := range strings.Fields(line) {
			if i == 0 || i == 4 || i == 5 || i > 8 {
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			s.busy += time.Duration(n) * (time.Second / 100)
		}
	}
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			s.self += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return s
}

// otherLoad describes the CPU that other processes used between a and b.
func otherLoad(a, b cpuSample) string {
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return "unknown"
	}
	cores := float64(runtime.NumCPU())
	other := float64((b.busy-a.busy)-(b.self-a.self)) / float64(wall) / cores
	self := float64(b.self-a.self) / float64(wall) / cores
	return fmt.Sprintf("this process and its children %.0f%%, other processes %.0f%% of %d cores over %s",
		100*self, 100*max(other, 0), runtime.NumCPU(), wall.Round(time.Second))
}
