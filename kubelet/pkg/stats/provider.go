package stats

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/pod"
)

// minRateWindow is the shortest interval a CPU rate is taken over: a
// reading closer than this to the last one keeps the last rate.
const minRateWindow = time.Second

// Options configure a Provider.
type Options struct {
	NodeName string
	Cgroups  *Cgroups
	// Pods are the pods this node runs.
	Pods func() []*corev1.Pod
	// PodCgroup is a pod's cgroup, the parent of its containers'
	// (cm.Manager.PodCgroup); a container's is <pod cgroup>/<container ID>.
	PodCgroup func(*corev1.Pod) string
	// Containers lists the containers of every pod on the node.
	Containers func(ctx context.Context) ([]pod.Container, error)
	// MemoryCapacity is the node's memory, in bytes, for its available
	// memory.
	MemoryCapacity uint64
	// Now is the clock (tests set it).
	Now func() time.Time
}

// Provider reads the node's, pods' and containers' usage.
type Provider struct {
	o Options
	// bootTime is the node's start time.
	bootTime time.Time

	mu sync.Mutex
	// last is the last reading of each cgroup the CPU rate was taken
	// from, with that rate.
	last map[string]cpuSample
}

type cpuSample struct {
	time time.Time
	cpu  uint64
	rate *uint64
}

// New returns a Provider.
func New(o Options) *Provider {
	if o.Now == nil {
		o.Now = time.Now
	}
	p := &Provider{o: o, last: map[string]cpuSample{}}
	if bt, err := readKeyed(filepath.Join(o.Cgroups.procDir, "stat")); err == nil && bt["btime"] > 0 {
		p.bootTime = time.Unix(int64(bt["btime"]), 0)
	}
	return p
}

// Snapshot is one reading of the node and every pod on it.
type Snapshot struct {
	Node NodeStats
	Pods []PodStats
}

// NodeStats is the root cgroup's reading.
type NodeStats struct {
	Name      string
	StartTime time.Time
	Usage     Usage
	// CPURate is the CPU use in nano-cores; nil before a second reading.
	CPURate        *uint64
	MemoryCapacity uint64
}

// PodStats is a pod cgroup's reading and its running containers'.
type PodStats struct {
	Pod        *corev1.Pod
	Cgroup     string
	Usage      Usage
	CPURate    *uint64
	Containers []ContainerStats
}

// ContainerStats is a container cgroup's reading.
type ContainerStats struct {
	Container pod.Container
	Cgroup    string
	Usage     Usage
	CPURate   *uint64
}

// Snapshot reads the node's cgroup, every pod's and every running
// container's. A pod or container whose cgroup is gone (it just ended) or
// not there yet is left out.
func (p *Provider) Snapshot(ctx context.Context) (*Snapshot, error) {
	logger := klog.FromContext(ctx)
	node, err := p.o.Cgroups.Read("/", p.o.Now())
	if err != nil {
		return nil, fmt.Errorf("reading the node's cgroup: %w", err)
	}
	containers, err := p.o.Containers(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the containers: %w", err)
	}
	byPod := map[types.UID][]pod.Container{}
	for _, c := range containers {
		if c.State == pod.StateRunning {
			byPod[c.PodUID()] = append(byPod[c.PodUID()], c)
		}
	}
	seen := map[string]bool{"/": true}
	s := &Snapshot{Node: NodeStats{Name: p.o.NodeName, StartTime: p.bootTime, Usage: node, MemoryCapacity: p.o.MemoryCapacity}}
	s.Node.CPURate = p.rate("/", node)
	pods := p.o.Pods()
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	for _, pd := range pods {
		cs := byPod[pd.UID]
		if len(cs) == 0 {
			continue
		}
		cg := p.o.PodCgroup(pd)
		u, err := p.o.Cgroups.Read(cg, p.o.Now())
		if err != nil {
			logger.V(4).Info("No stats for pod", "pod", klog.KObj(pd), "err", err)
			continue
		}
		seen[cg] = true
		ps := PodStats{Pod: pd, Cgroup: cg, Usage: u, CPURate: p.rate(cg, u)}
		// The newest attempt of each container name.
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].Name() != cs[j].Name() {
				return cs[i].Name() < cs[j].Name()
			}
			return cs[i].Attempt() > cs[j].Attempt()
		})
		for i, c := range cs {
			if i > 0 && cs[i-1].Name() == c.Name() {
				continue
			}
			ccg := path.Join(cg, c.ID)
			cu, err := p.o.Cgroups.Read(ccg, p.o.Now())
			if err != nil {
				if !isGone(err) {
					logger.V(4).Info("No stats for container", "pod", klog.KObj(pd), "container", c.Name(), "err", err)
				}
				continue
			}
			seen[ccg] = true
			ps.Containers = append(ps.Containers, ContainerStats{Container: c, Cgroup: ccg, Usage: cu, CPURate: p.rate(ccg, cu)})
		}
		s.Pods = append(s.Pods, ps)
	}
	p.forget(seen)
	return s, nil
}

// rate is the CPU use in nano-cores between the last reading of cgroup
// (at least minRateWindow older) and u; nil without one.
func (p *Provider) rate(cgroup string, u Usage) *uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev, ok := p.last[cgroup]
	if ok && u.Time.Sub(prev.time) < minRateWindow && !u.Time.Before(prev.time) {
		return prev.rate
	}
	cur := cpuSample{time: u.Time, cpu: u.CPU}
	if ok && u.CPU >= prev.cpu && u.Time.After(prev.time) {
		r := uint64(float64(u.CPU-prev.cpu) / float64(u.Time.Sub(prev.time).Nanoseconds()) * 1e9)
		cur.rate = &r
	}
	p.last[cgroup] = cur
	return cur.rate
}

// forget drops the readings of cgroups not in seen (ended pods and
// containers).
func (p *Provider) forget(seen map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for cg := range p.last {
		if !seen[cg] {
			delete(p.last, cg)
		}
	}
}
