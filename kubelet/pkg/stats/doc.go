// Package stats reads what the node, its pods and their containers use
// from the pods' cgroups (cgroup v1's cpuacct, memory and pids
// hierarchies, or the unified v2 one) and serves it as upstream's kubelet
// does:
//
//	GET /stats/summary      the Summary API (k8s.io/kubelet/pkg/apis/stats/v1alpha1)
//	GET /metrics/resource   the resource metrics endpoint metrics-server scrapes
//	GET /metrics/cadvisor   cAdvisor's container_* series
//
// A request reads the cgroups then and there (cAdvisor keeps a housekeeping
// loop; skiff reads on demand, so an idle node does no work). Memory
// working set is usage less inactive file pages, as cAdvisor's. CPU usage
// in nano-cores is the rate between this reading and the previous one of
// the same cgroup at least a second older (the first reading has none),
// as cAdvisor's rate between its last two samples.
//
// Provider.Snapshot reads everything once; Summary, the resource metrics
// and the cAdvisor series are three views of one snapshot.
package stats
