package stats

import (
	"encoding/json"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Summary is the snapshot in the Summary API's shape.
func (s *Snapshot) Summary() *statsapi.Summary {
	n := s.Node
	out := &statsapi.Summary{
		Node: statsapi.NodeStats{
			NodeName:  n.Name,
			StartTime: metav1.NewTime(n.StartTime),
			CPU:       cpuStats(n.Usage, n.CPURate),
			Memory:    memoryStats(n.Usage, n.MemoryCapacity),
		},
		Pods: []statsapi.PodStats{},
	}
	for _, p := range s.Pods {
		ps := statsapi.PodStats{
			PodRef: statsapi.PodReference{Name: p.Pod.Name, Namespace: p.Pod.Namespace, UID: string(p.Pod.UID)},
			CPU:    cpuStats(p.Usage, p.CPURate),
			Memory: memoryStats(p.Usage, p.Usage.MemoryLimit),
		}
		if p.Pod.Status.StartTime != nil {
			ps.StartTime = *p.Pod.Status.StartTime
		} else {
			ps.StartTime = p.Pod.CreationTimestamp
		}
		if p.Usage.HasProcesses {
			n := p.Usage.Processes
			ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: &n}
		}
		for _, c := range p.Containers {
			ps.Containers = append(ps.Containers, statsapi.ContainerStats{
				Name:      c.Container.Name(),
				StartTime: metav1.NewTime(c.Container.StartedAt),
				CPU:       cpuStats(c.Usage, c.CPURate),
				Memory:    memoryStats(c.Usage, c.Usage.MemoryLimit),
			})
		}
		out.Pods = append(out.Pods, ps)
	}
	return out
}

func cpuStats(u Usage, rate *uint64) *statsapi.CPUStats {
	total := u.CPU
	return &statsapi.CPUStats{Time: metav1.NewTime(u.Time), UsageNanoCores: rate, UsageCoreNanoSeconds: &total}
}

// memoryStats: available is limit less working set, when there is a
// limit.
func memoryStats(u Usage, limit uint64) *statsapi.MemoryStats {
	usage, ws, rss := u.Memory, u.WorkingSet, u.RSS
	m := &statsapi.MemoryStats{Time: metav1.NewTime(u.Time), UsageBytes: &usage, WorkingSetBytes: &ws, RSSBytes: &rss}
	if limit > 0 {
		avail := uint64(0)
		if limit > ws {
			avail = limit - ws
		}
		m.AvailableBytes = &avail
	}
	if u.HasFaults {
		pf, mpf := u.PageFaults, u.MajorPageFaults
		m.PageFaults, m.MajorPageFaults = &pf, &mpf
	}
	return m
}

// SummaryHandler serves GET /stats/summary as JSON. only_cpu_and_memory
// is accepted, as upstream's; skiff's summary holds no more than CPU,
// memory and process counts either way.
func (p *Provider) SummaryHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get("only_cpu_and_memory"); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				http.Error(w, "invalid only_cpu_and_memory value "+strconv.Quote(v)+": want true or false", http.StatusBadRequest)
				return
			}
		}
		s, err := p.Snapshot(r.Context())
		if err != nil {
			http.Error(w, "Internal Error: failed to get node info: "+err.Error(), http.StatusInternalServerError)
			return
		}
		data, err := json.Marshal(s.Summary())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	})
}
