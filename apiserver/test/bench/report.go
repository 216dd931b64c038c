package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machineSummary describes where the figures were taken.
func machineSummary() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "date:    %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&sb, "cpu:     %s\n", cpuModel())
	fmt.Fprintf(&sb, "cores:   %d (GOMAXPROCS %d)\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&sb, "memory:  %s\n", memTotal())
	fmt.Fprintf(&sb, "go:      %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&sb, "kernel:  %s\n", kernel())
	return sb.String()
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				break
			}
			return fmt.Sprintf("%.1f GiB", kb/(1<<20))
		}
	}
	return "unknown"
}

func kernel() string {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	typ, err := os.ReadFile("/proc/sys/kernel/ostype")
	if err != nil {
		typ = []byte("Linux")
	}
	return strings.TrimSpace(string(typ)) + " " + strings.TrimSpace(string(rel))
}

// row is one line of the results table.
type row struct {
	benchmark, setting, result, target, met string
}

func (b *bench) add(r row) {
	b.rows = append(b.rows, r)
	progress("%s (%s): %s", r.benchmark, r.setting, r.result)
}

func (b *bench) table() string {
	var sb strings.Builder
	sb.WriteString("| Benchmark | Setting | Result | Target | Met |\n")
	sb.WriteString("|---|---|---|---|---|\n")
	for _, r := range b.rows {
		t, m := r.target, r.met
		if t == "" {
			t, m = "–", "–"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s |\n", r.benchmark, r.setting, r.result, t, m)
	}
	return sb.String()
}

func metStr(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// quantile returns the q-quantile (nearest rank) of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

type latencySummary struct {
	n             int
	p50, p99, max time.Duration
}

func summarize(d []time.Duration) latencySummary {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return latencySummary{}
	}
	return latencySummary{n: len(s), p50: quantile(s, 0.50), p99: quantile(s, 0.99), max: s[len(s)-1]}
}

// ms formats a duration in milliseconds with a precision that suits it.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.0f ms", v)
	}
}

// cpuSample is the machine's busy CPU time and this process's CPU time at
// one moment, to tell how much of the machine other processes took during
// a run (the figures are only comparable on an otherwise idle machine).
type cpuSample struct {
	at         time.Time
	busy, self time.Duration
}

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		// cpu user nice system idle iowait irq softirq steal ...
		for i, v := range f {
			if i == 0 || i == 4 || i == 5 || i > 8 {
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			s.busy += time.Duration(n) * (time.Second / 100) // USER_HZ
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
	return fmt.Sprintf("this process %.0f%%, other processes %.0f%% of %d cores over %s",
		100*self, 100*max(other, 0), runtime.NumCPU(), wall.Round(time.Second))
}

// micros is d in microseconds.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
