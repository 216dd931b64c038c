package app

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"skiff.dev/apiserver/pkg/testserver"
)

// BenchmarkQueries measures skiff-dns over UDP on loopback, with
// GOMAXPROCS clients in parallel, each on its own socket: a cluster name
// (a ClusterIP Service's A record: after the first query, from the
// cache), cluster names that miss the cache (a new pod name each query,
// answered by the kubernetes plugin) and an external name answered from
// the cache (forwarded once to the test's resolver on loopback). It reports queries per
// second and the p50 and p99 latency of one query. Run it as:
//
//	cd dns && go test -run '^$' -bench Queries -benchtime 20000x ./app/
func BenchmarkQueries(b *testing.B) {
	ts := testserver.Start(b, nil)
	writeWorld(b, ts.Client)
	up := startUpstream(b)
	inst := startDNS(b, ts, up, func(o *Options) { o.RegisterService = false })
	poll(b, 30*time.Second, "the web Service's A record", func() (bool, string) {
		r := exchange(b, inst.addr, "web.records.svc.cluster.local", dns.TypeA)
		return len(r.Answer) == 1, r.String()
	})
	var seq atomic.Int64
	for _, bc := range []struct {
		name  string
		qname string
		// each, when set, gives every query a name of its own: a cache
		// miss answered by the kubernetes plugin.
		each func() string
	}{
		{name: "cluster", qname: "web.records.svc.cluster.local."},
		{name: "cluster-uncached", qname: "10-244-0-1.records.pod.cluster.local.", each: func() string {
			n := seq.Add(1)
			return fmt.Sprintf("10-%d-%d-%d.records.pod.cluster.local.", 1+n/62500, n/250%250, n%250)
		}},
		{name: "cached-external", qname: "www.example.test."},
	} {
		b.Run(bc.name, func(b *testing.B) {
			exchange(b, inst.addr, bc.qname, dns.TypeA)
			var mu sync.Mutex
			var all []time.Duration
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				co, err := dns.Dial("udp", inst.addr)
				if err != nil {
					b.Error(err)
					return
				}
				defer co.Close()
				var lat []time.Duration
				m := new(dns.Msg)
				m.SetQuestion(bc.qname, dns.TypeA)
				for pb.Next() {
					m.Id = dns.Id()
					if bc.each != nil {
						m.Question[0].Name = bc.each()
					}
					t0 := time.Now()
					_ = co.SetDeadline(t0.Add(5 * time.Second))
					if err := co.WriteMsg(m); err != nil {
						b.Error(err)
						return
					}
					r, err := co.ReadMsg()
					if err != nil {
						b.Error(err)
						return
					}
					lat = append(lat, time.Since(t0))
					if len(r.Answer) == 0 {
						b.Errorf("no answer for %s: %v", bc.qname, r)
						return
					}
				}
				mu.Lock()
				all = append(all, lat...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			if len(all) == 0 {
				return
			}
			b.ReportMetric(float64(len(all))/elapsed.Seconds(), "queries/s")
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		})
	}
}
