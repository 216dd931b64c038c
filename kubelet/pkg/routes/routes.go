package routes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Protocol marks the routes this package owns (the kernel keeps the
// number; `ip route` shows it as "proto 115"); routes of any other
// protocol are never changed.
const Protocol = netlink.RouteProtocol(115)

// ResyncPeriod is how often the routes are checked without node changes.
const ResyncPeriod = 30 * time.Second

// Options configure a Controller.
type Options struct {
	// NodeName is this node: no route is made to its own pod CIDR.
	NodeName string
	// ClusterCIDR gets a blackhole route when it has none; nil: none.
	ClusterCIDR *net.IPNet
	// Handle is the netlink handle of the network namespace to manage;
	// nil: the process's own.
	Handle *netlink.Handle
}

// Controller reconciles the routes with the nodes.
type Controller struct {
	o Options
	h *netlink.Handle
}

// New returns a Controller.
func New(o Options) (*Controller, error) {
	h := o.Handle
	if h == nil {
		var err error
		if h, err = netlink.NewHandle(unix.NETLINK_ROUTE); err != nil {
			return nil, fmt.Errorf("netlink: %w", err)
		}
	}
	return &Controller{o: o, h: h}, nil
}

// Route is one wanted route: the pod CIDR of a node, via its address.
type Route struct {
	Node string
	Dst  *net.IPNet
	Via  net.IP
}

// Desired lists the routes to the other nodes' IPv4 pod CIDRs, via their
// IPv4 InternalIP; nodes without either get none.
func Desired(self string, nodes []*corev1.Node) []Route {
	var out []Route
	for _, n := range nodes {
		if n.Name == self {
			continue
		}
		var via net.IP
		for _, a := range n.Status.Addresses {
			if ip := net.ParseIP(a.Address); a.Type == corev1.NodeInternalIP && ip != nil && ip.To4() != nil {
				via = ip.To4()
				break
			}
		}
		if via == nil {
			continue
		}
		cidrs := n.Spec.PodCIDRs
		if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
			cidrs = []string{n.Spec.PodCIDR}
		}
		for _, c := range cidrs {
			if _, dst, err := net.ParseCIDR(c); err == nil && dst.IP.To4() != nil {
				out = append(out, Route{Node: n.Name, Dst: dst, Via: via})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dst.String() < out[j].Dst.String() })
	return out
}

// Sync makes the kernel's routes match the nodes: it adds or replaces the
// wanted routes, removes the ones it owns that are no longer wanted, and
// adds the cluster CIDR's blackhole when no blackhole covers it. Errors of
// single routes are joined; the others are still made.
func (c *Controller) Sync(nodes []*corev1.Node) error {
	want := Desired(c.o.NodeName, nodes)
	have, err := c.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Protocol: Protocol, Table: unix.RT_TABLE_MAIN},
		netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("listing routes: %w", err)
	}
	var errs []error
	wanted := map[string]bool{}
	for _, r := range want {
		wanted[r.Dst.String()] = true
		if hasRoute(have, r) {
			continue
		}
		nr := &netlink.Route{Dst: r.Dst, Gw: r.Via, Protocol: Protocol, Table: unix.RT_TABLE_MAIN}
		if err := c.h.RouteReplace(nr); err != nil {
			errs = append(errs, fmt.Errorf("route %s via %s (node %s): %w", r.Dst, r.Via, r.Node, err))
		}
	}
	for i := range have {
		r := &have[i]
		// Only routes via another node are this package's to remove: the
		// blackhole is kept, and skiff-proxy's device route for the
		// service range shares the protocol number but has no gateway.
		if r.Dst == nil || wanted[r.Dst.String()] || r.Type == unix.RTN_BLACKHOLE || r.Gw == nil {
			continue
		}
		if err := c.h.RouteDel(r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("removing route %s: %w", r.Dst, err))
		}
	}
	if err := c.ensureBlackhole(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func hasRoute(have []netlink.Route, r Route) bool {
	for _, h := range have {
		if h.Dst != nil && h.Dst.String() == r.Dst.String() && h.Gw.Equal(r.Via) && h.Type != unix.RTN_BLACKHOLE {
			return true
		}
	}
	return false
}

// ensureBlackhole adds "blackhole <cluster CIDR>" unless a blackhole route
// for exactly that prefix exists (whoever made it).
func (c *Controller) ensureBlackhole() error {
	if c.o.ClusterCIDR == nil {
		return nil
	}
	all, err := c.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_MAIN, Type: unix.RTN_BLACKHOLE},
		netlink.RT_FILTER_TABLE|netlink.RT_FILTER_TYPE)
	if err != nil {
		return fmt.Errorf("listing blackhole routes: %w", err)
	}
	for _, r := range all {
		if r.Dst != nil && r.Dst.String() == c.o.ClusterCIDR.String() {
			return nil
		}
	}
	err = c.h.RouteAdd(&netlink.Route{Dst: c.o.ClusterCIDR, Type: unix.RTN_BLACKHOLE, Protocol: Protocol, Table: unix.RT_TABLE_MAIN})
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("blackhole route for the cluster CIDR %s: %w", c.o.ClusterCIDR, err)
	}
	return nil
}

// Run keeps the routes in step with the nodes until ctx ends: a sync after
// every node change and every ResyncPeriod.
func (c *Controller) Run(ctx context.Context, client kubernetes.Interface) error {
	logger := klog.FromContext(ctx).WithName("routes")
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Nodes().Informer()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	t := time.NewTicker(ResyncPeriod)
	defer t.Stop()
	for {
		var nodes []*corev1.Node
		for _, o := range inf.GetStore().List() {
			if n, ok := o.(*corev1.Node); ok {
				nodes = append(nodes, n)
			}
		}
		if err := c.Sync(nodes); err != nil {
			logger.Error(err, "Syncing the routes to other nodes' pod CIDRs")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-t.C:
		}
	}
}
