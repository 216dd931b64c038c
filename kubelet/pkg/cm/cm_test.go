package cm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeManager builds a Manager over fake hierarchies in a temporary
// directory: mkdir also writes the cgroup.controllers file the kernel
// would, and rmdir removes the directory with its files.
func fakeManager(t *testing.T, unified bool, root string) (*Manager, string) {
	t.Helper()
	base := t.TempDir()
	var hs []Hierarchy
	if unified {
		hs = []Hierarchy{{Path: filepath.Join(base, "unified"), Unified: true}}
	} else {
		hs = []Hierarchy{
			{Path: filepath.Join(base, "cpu"), Controllers: []string{"cpu", "cpuacct"}},
			{Path: filepath.Join(base, "memory"), Controllers: []string{"memory"}},
			{Path: filepath.Join(base, "pids"), Controllers: []string{"pids"}},
			{Path: filepath.Join(base, "systemd"), Controllers: []string{"name=systemd"}},
		}
	}
	m, err := New(Options{Hierarchies: hs, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	m.mkdirAll = func(dir string) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("cpuset cpu io memory pids"), 0o644)
	}
	m.rmdir = os.RemoveAll
	for _, h := range hs {
		if err := m.mkdirAll(h.Path); err != nil {
			t.Fatal(err)
		}
	}
	return m, base
}

func read(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func rl(cpu, mem string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if cpu != "" {
		out[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		out[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return out
}

func podWith(uid string, containers ...corev1.ResourceRequirements) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	for _, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: r})
	}
	return p
}

func TestPodCgroupByQoS(t *testing.T) {
	m, _ := fakeManager(t, false, "/skiff")
	tests := []struct {
		pod  *corev1.Pod
		want string
	}{
		{podWith("g", corev1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")}), "/skiff/kubepods/podg"},
		{podWith("b", corev1.ResourceRequirements{Requests: rl("100m", "")}), "/skiff/kubepods/burstable/podb"},
		{podWith("e", corev1.ResourceRequirements{}), "/skiff/kubepods/besteffort/pode"},
	}
	for _, tc := range tests {
		if got := m.PodCgroup(tc.pod); got != tc.want {
			t.Errorf("PodCgroup(%s) = %s, want %s", tc.pod.UID, got, tc.want)
		}
	}
	// The class the API server recorded wins.
	p := podWith("x", corev1.ResourceRequirements{})
	p.Status.QOSClass = corev1.PodQOSBurstable
	if got := m.PodCgroup(p); got != "/skiff/kubepods/burstable/podx" {
		t.Errorf("with status.qosClass: %s", got)
	}
}

func TestPodResources(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want Resources
	}{
		{"best effort", podWith("a", corev1.ResourceRequirements{}), Resources{CPUShares: 2}},
		{"requests only", podWith("a", corev1.ResourceRequirements{Requests: rl("250m", "64Mi")}), Resources{CPUShares: 256}},
		{"limits on every container", podWith("a",
			corev1.ResourceRequirements{Limits: rl("500m", "100Mi")},
			corev1.ResourceRequirements{Requests: rl("100m", "10Mi"), Limits: rl("1", "28Mi")}),
			Resources{CPUShares: 614, CPUQuota: 150000, MemoryLimit: 128 << 20}},
		{"a container without limits: none for the pod", podWith("a",
			corev1.ResourceRequirements{Limits: rl("500m", "100Mi")},
			corev1.ResourceRequirements{Requests: rl("100m", "")}),
			Resources{CPUShares: 614}},
		{"tiny quota raised to the kernel's minimum", podWith("a", corev1.ResourceRequirements{Limits: rl("1m", "")}),
			Resources{CPUShares: 2, CPUQuota: 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodResources(tc.pod); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	// An init container larger than the app containers sets the size.
	p := podWith("i", corev1.ResourceRequirements{Limits: rl("200m", "50Mi")})
	p.Spec.InitContainers = []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: rl("1", "20Mi")}}}
	if got := PodResources(p); got.CPUQuota != 100000 || got.MemoryLimit != 50<<20 || got.CPUShares != 1024 {
		t.Errorf("with an init container: %+v", got)
	}
}

func TestEnsureAndRemovePodV1(t *testing.T) {
	m, base := fakeManager(t, false, "/")
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(base, "cpu/kubepods/besteffort/cpu.shares")); got != "2" {
		t.Errorf("besteffort cpu.shares = %q", got)
	}
	p := podWith("u1", corev1.ResourceRequirements{Requests: rl("100m", "32Mi"), Limits: rl("200m", "64Mi")})
	if err := m.EnsurePod(p); err != nil {
		t.Fatal(err)
	}
	dir := "kubepods/burstable/podu1"
	for file, want := range map[string]string{
		"cpu/" + dir + "/cpu.shares":               "102",
		"cpu/" + dir + "/cpu.cfs_quota_us":         "20000",
		"cpu/" + dir + "/cpu.cfs_period_us":        "100000",
		"memory/" + dir + "/memory.limit_in_bytes": "67108864",
	} {
		if got := read(t, filepath.Join(base, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	uids, err := m.PodUIDs()
	if err != nil || len(uids) != 1 || uids[0] != "u1" {
		t.Errorf("PodUIDs = %v, %v", uids, err)
	}
	// A container cgroup left below the pod (as runc makes them) and one in
	// a hierarchy the kubelet never wrote to go too.
	for _, extra := range []string{"memory/" + dir + "/c1", "systemd/" + dir + "/c1"} {
		if err := os.MkdirAll(filepath.Join(base, extra), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.RemovePod("u1"); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"cpu", "memory", "pids", "systemd"} {
		if _, err := os.Stat(filepath.Join(base, h, dir)); !os.IsNotExist(err) {
			t.Errorf("%s/%s still exists: %v", h, dir, err)
		}
	}
	if uids, _ := m.PodUIDs(); len(uids) != 0 {
		t.Errorf("PodUIDs after removal = %v", uids)
	}
}

func TestEnsurePodV2(t *testing.T) {
	m, base := fakeManager(t, true, "/")
	if !m.Unified() {
		t.Fatal("a unified-only system is not seen as v2")
	}
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(base, "unified/kubepods/cgroup.subtree_control")); got != "+cpu +memory +pids" {
		t.Errorf("kubepods subtree_control = %q", got)
	}
	p := podWith("u2", corev1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")})
	if err := m.EnsurePod(p); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "unified/kubepods/podu2")
	for file, want := range map[string]string{"cpu.weight": "39", "cpu.max": "100000 100000", "memory.max": "1073741824"} {
		if got := read(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if err := m.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "unified/kubepods")); !os.IsNotExist(err) {
		t.Errorf("kubepods left after RemoveAll: %v", err)
	}
}

func TestMemoryWorkingSet(t *testing.T) {
	m, base := fakeManager(t, false, "/")
	dir := filepath.Join(base, "memory/kubepods/podz")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "memory.usage_in_bytes"), []byte("1000000\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "memory.stat"), []byte("cache 5\ntotal_inactive_file 250000\n"), 0o644)
	if ws, err := m.MemoryWorkingSet("/kubepods/podz"); err != nil || ws != 750000 {
		t.Errorf("working set = %d, %v; want 750000", ws, err)
	}
}

func TestDiscoverHierarchies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mountinfo")
	lines := []string{
		"22 1 0:21 / /proc rw,nosuid - proc proc rw",
		"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu,cpuacct",
		"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
		"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd",
		"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hs, err := DiscoverHierarchies(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 4 || !hs[0].has("cpuacct") || hs[1].Path != "/sys/fs/cgroup/memory" || !hs[2].has("name=systemd") || !hs[3].Unified {
		t.Errorf("hierarchies = %+v", hs)
	}
	m, err := New(Options{Hierarchies: hs})
	if err != nil || m.Unified() {
		t.Errorf("a hybrid system must use v1: %v %v", m, err)
	}
	if _, err := New(Options{Hierarchies: hs, Root: "relative"}); err == nil {
		t.Error("a relative cgroup root was accepted")
	}
	empty := filepath.Join(t.TempDir(), "none")
	_ = os.WriteFile(empty, []byte(lines[0]+"\n"), 0o644)
	if _, err := DiscoverHierarchies(empty); err == nil {
		t.Error("no cgroup mounts gave no error")
	}
}
