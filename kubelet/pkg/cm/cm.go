package cm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/component-base/qos"
)

// Upstream's names and CPU constants.
const (
	KubepodsName   = "kubepods"
	BurstableName  = "burstable"
	BestEffortName = "besteffort"
	podPrefix      = "pod"

	minShares    = 2
	maxShares    = 262144
	sharesPerCPU = 1024
	// QuotaPeriod is the CFS period, in µs.
	QuotaPeriod = 100000
	minQuota    = 1000 // µs, the kernel's minimum quota
)

// Options configure a Manager.
type Options struct {
	// Hierarchies are the mounted cgroup hierarchies (DiscoverHierarchies).
	Hierarchies []Hierarchy
	// Root is the kubelet's cgroup root (--cgroup-root), "/" by default:
	// kubepods is created below it.
	Root string
}

// Manager creates, sizes and removes the pods' cgroups.
type Manager struct {
	root string
	// v1 are the v1 hierarchies by controller; unified is the v2 mount,
	// when it carries the controllers (a pure v2 system).
	v1      map[string]string
	unified string
	// all are every hierarchy's mount points, where pod cgroups are removed.
	all []string
	// mkdirAll and rmdir create and remove one cgroup directory; the
	// kernel fills and empties its control files (tests replace them).
	mkdirAll func(dir string) error
	rmdir    func(dir string) error
}

// New returns a Manager for the given hierarchies.
func New(o Options) (*Manager, error) {
	m := &Manager{root: o.Root, v1: map[string]string{},
		mkdirAll: func(dir string) error { return os.MkdirAll(dir, 0o755) }, rmdir: os.Remove}
	if m.root == "" {
		m.root = "/"
	}
	if !path.IsAbs(m.root) || path.Clean(m.root) != m.root {
		return nil, fmt.Errorf("cgroup root %q must be a clean absolute path", o.Root)
	}
	var unified string
	for _, h := range o.Hierarchies {
		m.all = append(m.all, h.Path)
		if h.Unified {
			unified = h.Path
			continue
		}
		for _, c := range h.Controllers {
			m.v1[c] = h.Path
		}
	}
	if m.v1["memory"] == "" {
		if unified == "" {
			return nil, errors.New("neither a v1 memory hierarchy nor a unified cgroup hierarchy is mounted")
		}
		m.unified = unified
	}
	return m, nil
}

// Unified says whether pods get v2 cgroups.
func (m *Manager) Unified() bool { return m.unified != "" }

// Kubepods is the cgroup that holds every pod.
func (m *Manager) Kubepods() string { return path.Join(m.root, KubepodsName) }

func (m *Manager) qosDir(class corev1.PodQOSClass) string {
	switch class {
	case corev1.PodQOSBurstable:
		return path.Join(m.Kubepods(), BurstableName)
	case corev1.PodQOSBestEffort:
		return path.Join(m.Kubepods(), BestEffortName)
	}
	return m.Kubepods()
}

// PodCgroup is the cgroup (a path in the hierarchies) of a pod, under its
// QoS class: the parent of its containers' cgroups.
func (m *Manager) PodCgroup(pod *corev1.Pod) string {
	class := pod.Status.QOSClass
	if class == "" {
		class = qos.Class(pod)
	}
	return path.Join(m.qosDir(class), podPrefix+string(pod.UID))
}

// Setup creates kubepods and the two QoS cgroups; BestEffort pods share
// the least CPU weight, as upstream.
func (m *Manager) Setup() error {
	if m.Unified() {
		// Controllers must be enabled on every level down to the pods.
		for _, dir := range []string{m.root, m.Kubepods(), m.qosDir(corev1.PodQOSBurstable)} {
			if err := m.enableControllers(dir); err != nil {
				return err
			}
		}
	}
	for _, class := range []corev1.PodQOSClass{corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		if err := m.mkdir(m.qosDir(class)); err != nil {
			return err
		}
	}
	if m.Unified() {
		if err := m.enableControllers(m.qosDir(corev1.PodQOSBestEffort)); err != nil {
			return err
		}
	}
	return m.setCPU(m.qosDir(corev1.PodQOSBestEffort), minShares, 0)
}

// EnsurePod creates the pod's cgroup and sets its CPU shares (its CPU
// requests) and, when every container has one, its CPU quota and memory
// limit, as upstream sizes the pod cgroup.
func (m *Manager) EnsurePod(pod *corev1.Pod) error {
	dir := m.PodCgroup(pod)
	if err := m.mkdir(dir); err != nil {
		return err
	}
	if m.Unified() {
		if err := m.enableControllers(dir); err != nil {
			return err
		}
	}
	r := PodResources(pod)
	if err := m.setCPU(dir, r.CPUShares, r.CPUQuota); err != nil {
		return err
	}
	return m.setMemory(dir, r.MemoryLimit)
}

// RemovePod removes a pod's cgroup from every hierarchy, whatever its QoS
// class was, with any container cgroup left below it. A cgroup still
// holding processes cannot be removed: that is an error.
func (m *Manager) RemovePod(uid types.UID) error {
	var errs []error
	for _, class := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		dir := path.Join(m.qosDir(class), podPrefix+string(uid))
		for _, mnt := range m.all {
			if err := m.removeTree(filepath.Join(mnt, dir)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// RemoveAll removes kubepods and everything below it, in every hierarchy
// (for tests and for tearing a node down).
func (m *Manager) RemoveAll() error {
	var errs []error
	for _, mnt := range m.all {
		if err := m.removeTree(filepath.Join(mnt, m.Kubepods())); err != nil {
			errs = append(errs, err)
		}
		if m.root != "/" {
			if err := m.removeTree(filepath.Join(mnt, m.root)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// PodUIDs lists the pods that have a cgroup.
func (m *Manager) PodUIDs() ([]types.UID, error) {
	mnt := m.unified
	if mnt == "" {
		mnt = m.v1["memory"]
	}
	seen := map[types.UID]bool{}
	for _, class := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		entries, err := os.ReadDir(filepath.Join(mnt, m.qosDir(class)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), podPrefix) {
				seen[types.UID(strings.TrimPrefix(e.Name(), podPrefix))] = true
			}
		}
	}
	uids := make([]types.UID, 0, len(seen))
	for uid := range seen {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	return uids, nil
}

// MemoryWorkingSet is the memory a cgroup uses less its inactive file
// pages, as upstream's (cAdvisor's) working set.
func (m *Manager) MemoryWorkingSet(cgroup string) (int64, error) {
	if m.Unified() {
		dir := filepath.Join(m.unified, cgroup)
		usage, err := readInt(filepath.Join(dir, "memory.current"))
		if err != nil {
			return 0, err
		}
		inactive, _ := readStat(filepath.Join(dir, "memory.stat"), "inactive_file")
		return max(usage-inactive, 0), nil
	}
	dir := filepath.Join(m.v1["memory"], cgroup)
	usage, err := readInt(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return 0, err
	}
	inactive, _ := readStat(filepath.Join(dir, "memory.stat"), "total_inactive_file")
	return max(usage-inactive, 0), nil
}

// Processes counts the tasks in a cgroup (pids.current).
func (m *Manager) Processes(cgroup string) (int64, error) {
	mnt := m.unified
	if mnt == "" {
		if mnt = m.v1["pids"]; mnt == "" {
			return 0, errors.New("no pids cgroup hierarchy is mounted")
		}
	}
	return readInt(filepath.Join(mnt, cgroup, "pids.current"))
}

func (m *Manager) mkdir(dir string) error {
	if m.Unified() {
		return m.mkdirAll(filepath.Join(m.unified, dir))
	}
	for _, c := range []string{"cpu", "memory", "pids"} {
		if mnt := m.v1[c]; mnt != "" {
			if err := m.mkdirAll(filepath.Join(mnt, dir)); err != nil {
				return err
			}
		}
	}
	return nil
}

// enableControllers lets dir's children use cpu, memory and pids (v2).
func (m *Manager) enableControllers(dir string) error {
	full := filepath.Join(m.unified, dir)
	if err := m.mkdirAll(full); err != nil {
		return err
	}
	avail, err := os.ReadFile(filepath.Join(full, "cgroup.controllers"))
	if err != nil {
		return err
	}
	var enable []string
	for _, c := range strings.Fields(string(avail)) {
		if c == "cpu" || c == "memory" || c == "pids" {
			enable = append(enable, "+"+c)
		}
	}
	if len(enable) == 0 {
		return nil
	}
	return os.WriteFile(filepath.Join(full, "cgroup.subtree_control"), []byte(strings.Join(enable, " ")), 0o644)
}

func (m *Manager) setCPU(dir string, shares uint64, quota int64) error {
	if m.Unified() {
		weight := 1 + ((shares-2)*9999)/262142 // upstream's shares-to-weight conversion
		if err := write(filepath.Join(m.unified, dir, "cpu.weight"), strconv.FormatUint(weight, 10)); err != nil {
			return err
		}
		limit := "max"
		if quota > 0 {
			limit = strconv.FormatInt(quota, 10)
		}
		return write(filepath.Join(m.unified, dir, "cpu.max"), fmt.Sprintf("%s %d", limit, QuotaPeriod))
	}
	mnt := m.v1["cpu"]
	if mnt == "" {
		return nil
	}
	if err := write(filepath.Join(mnt, dir, "cpu.shares"), strconv.FormatUint(shares, 10)); err != nil {
		return err
	}
	if quota <= 0 {
		quota = -1
	}
	if err := write(filepath.Join(mnt, dir, "cpu.cfs_period_us"), strconv.Itoa(QuotaPeriod)); err != nil {
		return err
	}
	return write(filepath.Join(mnt, dir, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
}

func (m *Manager) setMemory(dir string, limit int64) error {
	if m.Unified() {
		v := "max"
		if limit > 0 {
			v = strconv.FormatInt(limit, 10)
		}
		return write(filepath.Join(m.unified, dir, "memory.max"), v)
	}
	mnt := m.v1["memory"]
	if mnt == "" {
		return nil
	}
	if limit <= 0 {
		limit = -1
	}
	return write(filepath.Join(mnt, dir, "memory.limit_in_bytes"), strconv.FormatInt(limit, 10))
}

// Resources are what a pod cgroup is given.
type Resources struct {
	CPUShares uint64
	// CPUQuota is µs per QuotaPeriod; 0 for none.
	CPUQuota int64
	// MemoryLimit in bytes; 0 for none.
	MemoryLimit int64
}

// PodResources sizes a pod cgroup as upstream: the CPU shares of its
// effective CPU request (the larger of the containers' sum and the largest
// init container's, plus the pod overhead), and CPU and memory limits only
// when every container has that limit.
func PodResources(pod *corev1.Pod) Resources {
	reqCPU := effective(pod, corev1.ResourceCPU, func(c *corev1.Container) (resource.Quantity, bool) {
		q, ok := c.Resources.Requests[corev1.ResourceCPU]
		if !ok {
			q, ok = c.Resources.Limits[corev1.ResourceCPU]
		}
		return q, ok
	}, false)
	limCPU := effective(pod, corev1.ResourceCPU, limitOf(corev1.ResourceCPU), true)
	limMem := effective(pod, corev1.ResourceMemory, limitOf(corev1.ResourceMemory), true)
	r := Resources{CPUShares: MilliCPUToShares(reqCPU)}
	if limCPU > 0 {
		r.CPUQuota = MilliCPUToQuota(limCPU)
	}
	if limMem > 0 {
		r.MemoryLimit = limMem
	}
	return r
}

func limitOf(name corev1.ResourceName) func(c *corev1.Container) (resource.Quantity, bool) {
	return func(c *corev1.Container) (resource.Quantity, bool) {
		q, ok := c.Resources.Limits[name]
		return q, ok
	}
}

// effective sums get over the app containers and takes the larger of that
// and the largest init container's, plus the overhead. With needAll, a
// container without the value makes the result 0 (no limit). CPU is in
// milli-units, memory in bytes.
func effective(pod *corev1.Pod, name corev1.ResourceName, get func(*corev1.Container) (resource.Quantity, bool), needAll bool) int64 {
	value := func(q resource.Quantity) int64 {
		if name == corev1.ResourceCPU {
			return q.MilliValue()
		}
		return q.Value()
	}
	var sum int64
	for i := range pod.Spec.Containers {
		q, ok := get(&pod.Spec.Containers[i])
		if !ok && needAll {
			return 0
		}
		sum += value(q)
	}
	for i := range pod.Spec.InitContainers {
		q, ok := get(&pod.Spec.InitContainers[i])
		if !ok && needAll {
			return 0
		}
		sum = max(sum, value(q))
	}
	if q, ok := pod.Spec.Overhead[name]; ok && sum > 0 {
		sum += value(q)
	}
	return sum
}

// MilliCPUToShares converts a CPU request to cgroup cpu.shares, as
// upstream: 1024 per CPU, at least 2.
func MilliCPUToShares(milli int64) uint64 {
	if milli <= 0 {
		return minShares
	}
	return uint64(min(max(milli*sharesPerCPU/1000, minShares), maxShares))
}

// MilliCPUToQuota converts a CPU limit to a CFS quota in µs per
// QuotaPeriod, at least the kernel's minimum.
func MilliCPUToQuota(milli int64) int64 {
	return max(milli*QuotaPeriod/1000, minQuota)
}

func write(file, value string) error {
	if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
		return fmt.Errorf("writing %s to %s: %w", value, file, err)
	}
	return nil
}

func readInt(file string) (int64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

func readStat(file, key string) (int64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no %s", file, key)
}

// removeTree removes a cgroup directory and the cgroups below it, deepest
// first (a cgroup directory is removed with rmdir; its control files go
// with it).
func (m *Manager) removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			if err := m.removeTree(filepath.Join(dir, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := m.rmdir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
	}
	return errors.Join(errs...)
}
