package eviction

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestReadMemory(t *testing.T) {
	tests := []struct {
		name          string
		file          string
		wantCapacity  int64
		wantAvailable int64
		wantErr       string
	}{
		// usage = 8000000-1000000 kB; working set = usage - 2000000 kB
		// inactive file; available = total - working set = 3000000 kB.
		{name: "fixture", file: "testdata/meminfo", wantCapacity: 8000000 * 1024, wantAvailable: 3000000 * 1024},
		{name: "missing field", file: "testdata/meminfo-no-inactive", wantErr: "no Inactive(file)"},
		{name: "garbage", file: "testdata/meminfo-bad", wantErr: "field MemTotal"},
		{name: "missing file", file: "testdata/nope", wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadMemory(tt.file)
			if done := checkErr(t, err, tt.wantErr); done {
				return
			}
			if got.Capacity.Value() != tt.wantCapacity || got.Available.Value() != tt.wantAvailable {
				t.Errorf("capacity %d available %d, want %d and %d", got.Capacity.Value(), got.Available.Value(), tt.wantCapacity, tt.wantAvailable)
			}
		})
	}
}

func TestReadPIDs(t *testing.T) {
	tests := []struct {
		name                        string
		pidMax, threadsMax, loadavg string
		wantCapacity, wantAvail     int64
		wantErr                     string
	}{
		{name: "threads-max is lower", pidMax: "testdata/pid_max", threadsMax: "testdata/threads-max", loadavg: "testdata/loadavg",
			wantCapacity: 63000, wantAvail: 63000 - 1500},
		{name: "no threads-max", pidMax: "testdata/pid_max", threadsMax: "testdata/nope", loadavg: "testdata/loadavg",
			wantCapacity: 4194304, wantAvail: 4194304 - 1500},
		{name: "bad loadavg", pidMax: "testdata/pid_max", threadsMax: "testdata/threads-max", loadavg: "testdata/meminfo",
			wantErr: "unexpected"},
		{name: "no pid_max", pidMax: "testdata/nope", loadavg: "testdata/loadavg", wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPIDs(tt.pidMax, tt.threadsMax, tt.loadavg)
			if done := checkErr(t, err, tt.wantErr); done {
				return
			}
			if got.Capacity.Value() != tt.wantCapacity || got.Available.Value() != tt.wantAvail {
				t.Errorf("capacity %d available %d, want %d and %d", got.Capacity.Value(), got.Available.Value(), tt.wantCapacity, tt.wantAvail)
			}
		})
	}
}

// TestNodeSignalsOnThisMachine reads the real host.
func TestNodeSignalsOnThisMachine(t *testing.T) {
	dir := t.TempDir()
	s := &NodeSignals{RootDir: dir, ImageFSDir: dir}
	obs, err := s.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	var memTotal int64
	for _, line := range strings.Split(string(meminfo), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			memTotal = kb * 1024
		}
	}
	mem := obs.Signals[SignalMemoryAvailable]
	if mem.Capacity.Value() != memTotal {
		t.Errorf("memory capacity %d, want MemTotal %d", mem.Capacity.Value(), memTotal)
	}
	if a := mem.Available.Value(); a <= 0 || a > memTotal {
		t.Errorf("memory available %d, want in (0, %d]", a, memTotal)
	}
	for _, sig := range []Signal{SignalNodeFsAvailable, SignalNodeFsInodesFree, SignalImageFsAvailable, SignalImageFsInodesFree, SignalPIDAvailable} {
		o, ok := obs.Signals[sig]
		if !ok {
			t.Errorf("%s not observed", sig)
			continue
		}
		if c, a := o.Capacity.Value(), o.Available.Value(); c <= 0 || a < 0 || a > c {
			t.Errorf("%s: capacity %d available %d", sig, c, a)
		}
	}
	if obs.DedicatedImageFS {
		t.Error("the same directory is reported as a dedicated image filesystem")
	}
	if _, err := (&NodeSignals{RootDir: "/nonexistent-skiff", ImageFSDir: dir}).Observe(context.Background()); err == nil {
		t.Error("a missing root directory gave no error")
	}
}
