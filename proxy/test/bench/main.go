// Command bench measures skiff-proxy with 1,000 Services of 10 endpoints
// each (by default): the time of a full sync, of a sync after one
// endpoint changes, and, against a real test API server, the time from an
// EndpointSlice change in the API to its rule in the kernel. It needs
// root and runs itself again in a network namespace of its own
// (`unshare --net`), so the host's tables are never touched.
//
//	cd proxy && go run ./test/bench
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/proxy/app"
	"skiff.dev/proxy/pkg/iptables"
	"skiff.dev/proxy/pkg/netnstest"
)

func main() {
	services := flag.Int("services", 1000, "Services")
	endpoints := flag.Int("endpoints", 10, "endpoints per Service")
	partials := flag.Int("partial-syncs", 20, "syncs after one endpoint change, in the kernel phase")
	changes := flag.Int("changes", 100, "EndpointSlice changes timed from the API to the kernel")
	minSync := flag.Duration("min-sync-period", time.Second, "the proxy's --min-sync-period in the API phase")
	pace := flag.Duration("pace", 1100*time.Millisecond, "time between two EndpointSlice changes in the API phase")
	skipAPI := flag.Bool("skip-api", false, "only the kernel phase")
	klog.InitFlags(nil)
	flag.Parse()
	ran, code, err := netnstest.Reexec()
	if err != nil {
		fatal(err)
	}
	if ran {
		os.Exit(code)
	}
	if !netnstest.InNetNS() {
		fatal(fmt.Errorf("needs root: it runs in a network namespace of its own"))
	}
	fmt.Print(machineSummary())
	fmt.Printf("%d Services x %d endpoints\n\n", *services, *endpoints)
	a := sampleCPU()
	if err := kernelPhase(*services, *endpoints, *partials); err != nil {
		fatal(err)
	}
	b := sampleCPU()
	fmt.Printf("  cpu: %s\n\n", otherLoad(a, b))
	if *skipAPI {
		return
	}
	if err := apiPhase(*services, *endpoints, *changes, *minSync, *pace); err != nil {
		fatal(err)
	}
	fmt.Printf("  cpu: %s\n", otherLoad(b, sampleCPU()))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return "Linux " + strings.TrimSpace(string(b))
}

func iptablesVersion() string {
	out, _ := exec.Command("iptables", "--version").Output()
	return strings.TrimSpace(string(out))
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(b)
}

// endpointIP is the n-th address in 10.244.0.0/16.
func endpointIP(n int) string {
	return fmt.Sprintf("10.244.%d.%d", n/250, n%250+1)
}

func service(i int, clusterIP string) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("svc-%04d", i)},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if clusterIP != "" {
		s.Spec.ClusterIPs = []string{clusterIP}
	}
	return s
}

func slice(i, endpoints int, first int) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "bench", Name: fmt.Sprintf("svc-%04d-x", i),
			Labels: map[string]string{discoveryv1.LabelServiceName: fmt.Sprintf("svc-%04d", i)},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for j := 0; j < endpoints; j++ {
		ip := endpointIP(i*endpoints + j)
		if j == 0 && first >= 0 {
			ip = endpointIP(first)
		}
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{ip}, NodeName: ptr.To("node-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	return s
}

func ruleOptions() iptables.RuleOptions {
	_, cidr, _ := net.ParseCIDR("10.244.0.0/16")
	return iptables.RuleOptions{NodeName: "node-1", ClusterCIDR: cidr, MasqueradeBit: 14, LocalhostNodePorts: true, MasqueradePodEgress: true}
}

type stats []time.Duration

func (s stats) String() string {
	if len(s) == 0 {
		return "-"
	}
	c := append(stats(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	q := func(p float64) time.Duration { return c[min(len(c)-1, int(p*float64(len(c))))] }
	return fmt.Sprintf("n=%d min %v p50 %v p99 %v max %v", len(c), r(c[0]), r(q(0.5)), r(q(0.99)), r(c[len(c)-1]))
}

func r(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }

// kernelPhase times syncs of a Proxier over in-memory caches.
func kernelPhase(services, endpoints, partials int) error {
	k, err := iptables.NewExecKernel()
	if err != nil {
		return err
	}
	defer func() { _ = iptables.Cleanup(context.Background(), k) }()
	svcIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	sliceIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, iptables.SliceIndexers())
	p := iptables.New(iptables.Options{
		Rules: ruleOptions(), MinSyncPeriod: 0, SyncPeriod: time.Minute,
		Services: corelisters.NewServiceLister(svcIdx), Slices: sliceIdx, Kernel: k,
	})
	for i := 0; i < services; i++ {
		s := service(i, fmt.Sprintf("10.96.%d.%d", 1+i/250, i%250+1))
		sl := slice(i, endpoints, -1)
		_ = svcIdx.Add(s)
		_ = sliceIdx.Add(sl)
		p.ServiceHandler().OnAdd(s, false)
		p.SliceHandler().OnAdd(sl, false)
	}
	ctx := context.Background()
	var full stats
	var first iptables.SyncInfo
	for i := 0; i < 3; i++ {
		p.NodeChanged() // asks for a full sync
		info := p.Sync(ctx)
		if info.Err != nil {
			return info.Err
		}
		if i == 0 {
			first = info
		}
		fmt.Printf("  full sync %d: %v %v\n", i, r(info.Duration), info.Steps)
		full = append(full, info.Duration)
	}
	fmt.Printf("kernel phase (Proxier over in-memory caches, iptables-restore in the namespace)\n")
	fmt.Printf("  rules: nat %d, filter %d\n", first.Rules[iptables.TableNAT], first.Rules[iptables.TableFilter])
	fmt.Printf("  full sync, empty tables:        %v\n", r(full[0]))
	fmt.Printf("  full sync, over its own rules:  %v\n", stats(full[1:]))
	var partial stats
	for c := 0; c < partials; c++ {
		i := (c * 37) % services
		sl := slice(i, endpoints, services*endpoints+c)
		_ = sliceIdx.Update(sl)
		p.SliceHandler().OnUpdate(nil, sl)
		info := p.Sync(ctx)
		if info.Err != nil {
			return info.Err
		}
		if info.Full || info.Written != 1 {
			return fmt.Errorf("sync after one change: full %v, %d Services written", info.Full, info.Written)
		}
		partial = append(partial, info.Duration)
		if c < 3 {
			fmt.Printf("  partial sync %d: %v %v\n", c, r(info.Duration), info.Steps)
		}
	}
	fmt.Printf("  sync after one endpoint change: %v\n", partial)
	return nil
}

// apiPhase runs the daemon against a test API server and times
// EndpointSlice changes from the API call to the end of the sync that
// wrote them (the rule is in the kernel when iptables-restore returns).
func apiPhase(services, endpoints, changes int, minSync, pace time.Duration) error {
	dir, err := os.MkdirTemp("", "skiff-proxy-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ts, err := testserver.StartServer(dir, func(o *server.Options) { o.AdvertiseAddress = "192.0.2.10" })
	if err != nil {
		return err
	}
	defer ts.TearDown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := ts.Client
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	start := time.Now()
	if err := parallel(services, func(i int) error {
		if _, err := client.CoreV1().Services("bench").Create(ctx, service(i, ""), metav1.CreateOptions{}); err != nil {
			return err
		}
		_, err := client.DiscoveryV1().EndpointSlices("bench").Create(ctx, slice(i, endpoints, -1), metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	fmt.Printf("API phase (skiff-proxy in-process as system:kube-proxy, test API server on an embedded etcd)\n")
	fmt.Printf("  created %d Services and EndpointSlices in %v\n", services, r(time.Since(start)))

	o := app.NewOptions()
	o.Client.Kubeconfig = filepath.Join(ts.Dir, "proxy.kubeconfig")
	o.HostnameOverride = "node-1"
	o.HealthzBindAddress, o.MetricsBindAddress = "127.0.0.1:0", "127.0.0.1:0"
	o.MinSyncPeriod = minSync
	cfg, err := app.Setup(ctx, o)
	if err != nil {
		return err
	}
	syncs := make(chan iptables.SyncInfo, 1024)
	cfg.Proxier.SetOnSynced(func(info iptables.SyncInfo) { syncs <- info })
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- app.Run(ctx, cfg) }()
	defer func() {
		cancel()
		<-done
		_ = app.Cleanup(context.Background(), cfg.Kernel)
	}()
	wantNAT := services * endpoints
	for {
		info, err := next(syncs, done, time.Minute)
		if err != nil {
			return err
		}
		if info.Err == nil && info.Rules[iptables.TableNAT] >= wantNAT {
			fmt.Printf("  daemon start to all %d Services programmed: %v (last sync %v)\n", services, r(time.Since(started)), r(info.Duration))
			break
		}
	}

	var lat, quiet stats
	behindFull := 0
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for c := 0; c < changes; c++ {
		<-tick.C
		i := (c * 7) % services
		name := types.NamespacedName{Namespace: "bench", Name: fmt.Sprintf("svc-%04d", i)}
		sl := slice(i, endpoints, services*endpoints+c)
		t0 := time.Now()
		sl.Annotations = map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": t0.UTC().Format(time.RFC3339Nano)}
		if _, err := client.DiscoveryV1().EndpointSlices("bench").Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
			return err
		}
		full := false
		for {
			info, err := next(syncs, done, time.Minute)
			if err != nil {
				return err
			}
			full = full || info.Full
			if info.Err == nil && info.Changed[name] {
				d := time.Since(t0)
				lat = append(lat, d)
				if full {
					behindFull++
				} else {
					quiet = append(quiet, d)
				}
				break
			}
		}
	}
	fmt.Printf("  EndpointSlice update -> rule in the kernel (min-sync-period %v, one change every %v):\n", minSync, pace)
	fmt.Printf("    all changes:                          %v\n", lat)
	fmt.Printf("    %3d changes written by or after a full sync (every --sync-period %v)\n", behindFull, o.SyncPeriod)
	fmt.Printf("    the others (partial syncs only):      %v\n", quiet)
	out, err := exec.Command("iptables-save", "-t", "nat").Output()
	if err != nil {
		return err
	}
	missing := 0
	for c := 0; c < changes; c++ {
		if !strings.Contains(string(out), "--to-destination "+endpointIP(services*endpoints+c)+":8080") {
			missing++
		}
	}
	if missing > 0 {
		return fmt.Errorf("%d of the %d changed endpoints have no DNAT rule", missing, changes)
	}
	fmt.Printf("  all %d changed endpoints have their DNAT rule (iptables-save)\n", changes)
	return nil
}

func next(syncs <-chan iptables.SyncInfo, done <-chan error, timeout time.Duration) (iptables.SyncInfo, error) {
	select {
	case info := <-syncs:
		return info, nil
	case err := <-done:
		return iptables.SyncInfo{}, fmt.Errorf("the daemon stopped: %v", err)
	case <-time.After(timeout):
		return iptables.SyncInfo{}, fmt.Errorf("no sync for %v", timeout)
	}
}

func parallel(n int, f func(int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

var _ kubernetes.Interface = (*kubernetes.Clientset)(nil)
