package netsafety

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	goiptables "github.com/coreos/go-iptables/iptables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

const (
	// DummyInterface holds the service CIDR's route.
	DummyInterface = "skiff-svc0"
	// RouteProtocol marks the route (`ip route` shows "proto 115"), the
	// number kubelet/pkg/routes uses for skiff's routes.
	RouteProtocol = netlink.RouteProtocol(115)
	// GuardChain is the egress guard's filter chain.
	GuardChain = "SKIFF-EGRESS-GUARD"
	// guardComment marks the jump from FORWARD.
	guardComment = "skiff egress guard"
)

// EnsureServiceRoute makes the dummy interface exist and be up, and
// routes cidr to it.
func EnsureServiceRoute(cidr *net.IPNet) error {
	link, err := netlink.LinkByName(DummyInterface)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if !errors.As(err, &nf) {
			return fmt.Errorf("looking up %s: %w", DummyInterface, err)
		}
		if err := addLink(); err != nil {
			return err
		}
		if link, err = netlink.LinkByName(DummyInterface); err != nil {
			return fmt.Errorf("looking up %s: %w", DummyInterface, err)
		}
	}
	if link.Type() != "dummy" && link.Type() != "bridge" {
		return fmt.Errorf("%s exists and is a %s interface, not a dummy", DummyInterface, link.Type())
	}
	if link.Attrs().Flags&net.FlagUp == 0 {
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("bringing up %s: %w", DummyInterface, err)
		}
	}
	route := serviceRoute(link, cidr)
	have, err := netlink.RouteListFiltered(netlink.FAMILY_V4, route, netlink.RT_FILTER_DST|netlink.RT_FILTER_OIF|netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("listing the routes of %s: %w", DummyInterface, err)
	}
	if len(have) > 0 {
		return nil
	}
	if err := netlink.RouteReplace(route); err != nil {
		return fmt.Errorf("routing %s to %s: %w", cidr, DummyInterface, err)
	}
	return nil
}

// addLink creates the interface: a dummy, or, on kernels built without
// dummy interfaces (CONFIG_DUMMY unset), a bridge without ports, which
// drops what is routed to it just as well (no port to send it out of).
func addLink() error {
	attrs := netlink.LinkAttrs{Name: DummyInterface}
	err := netlink.LinkAdd(&netlink.Dummy{LinkAttrs: attrs})
	if errors.Is(err, unix.EOPNOTSUPP) {
		err = netlink.LinkAdd(&netlink.Bridge{LinkAttrs: attrs})
	}
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("creating %s: %w", DummyInterface, err)
	}
	return nil
}

func serviceRoute(link netlink.Link, cidr *net.IPNet) *netlink.Route {
	return &netlink.Route{
		LinkIndex: link.Attrs().Index, Dst: cidr, Protocol: RouteProtocol,
		Scope: netlink.SCOPE_LINK, Table: unix.RT_TABLE_MAIN,
	}
}

// HasServiceRoute reports whether cidr is routed to the dummy interface
// and the interface is up.
func HasServiceRoute(cidr *net.IPNet) (bool, error) {
	link, err := netlink.LinkByName(DummyInterface)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return false, nil
		}
		return false, err
	}
	if link.Attrs().Flags&net.FlagUp == 0 {
		return false, nil
	}
	have, err := netlink.RouteListFiltered(netlink.FAMILY_V4, serviceRoute(link, cidr), netlink.RT_FILTER_DST|netlink.RT_FILTER_OIF|netlink.RT_FILTER_TABLE)
	if err != nil {
		return false, err
	}
	for _, r := range have {
		if r.Protocol == RouteProtocol {
			return true, nil
		}
	}
	return false, nil
}

// RemoveServiceRoute deletes the dummy interface (and with it its route).
func RemoveServiceRoute() error {
	link, err := netlink.LinkByName(DummyInterface)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return err
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("deleting %s: %w", DummyInterface, err)
	}
	return nil
}

// Guard is the egress guard's configuration.
type Guard struct {
	// ClusterCIDR and ServiceCIDR are the cluster's networks.
	ClusterCIDR, ServiceCIDR *net.IPNet
	// AllowInterfaces are the interfaces cluster traffic may be
	// forwarded out of.
	AllowInterfaces []string
}

// Rules are the guard chain's rules, in order.
func (g Guard) Rules() [][]string {
	var rules [][]string
	for _, ifc := range g.AllowInterfaces {
		rules = append(rules, []string{"-o", ifc, "-m", "comment", "--comment", "skiff egress guard: allowed interface", "-j", "RETURN"})
	}
	if g.ClusterCIDR != nil {
		c := g.ClusterCIDR.String()
		rules = append(rules,
			[]string{"-s", c, "-m", "comment", "--comment", "skiff egress guard: cluster traffic leaving by another interface", "-j", "DROP"},
			[]string{"-d", c, "-m", "comment", "--comment", "skiff egress guard: cluster traffic leaving by another interface", "-j", "DROP"})
	}
	if g.ServiceCIDR != nil {
		rules = append(rules, []string{"-d", g.ServiceCIDR.String(), "-m", "comment", "--comment", "skiff egress guard: service traffic not DNATed", "-j", "DROP"})
	}
	return rules
}

// JumpRule is the rule in FORWARD that sends traffic to the guard.
func JumpRule() []string {
	return []string{"-m", "comment", "--comment", guardComment, "-j", GuardChain}
}

// EnsureEgressGuard makes the guard chain hold exactly g's rules and the
// jump to it be FORWARD's first rule.
func EnsureEgressGuard(ipt *goiptables.IPTables, g Guard) error {
	ok, err := ipt.ChainExists("filter", GuardChain)
	if err != nil {
		return fmt.Errorf("egress guard: %w", err)
	}
	if !ok {
		if err := ipt.NewChain("filter", GuardChain); err != nil {
			return fmt.Errorf("egress guard: %w", err)
		}
	}
	want := g.Rules()
	have, err := ipt.List("filter", GuardChain)
	if err != nil {
		return fmt.Errorf("egress guard: %w", err)
	}
	same := len(have) == len(want)+1 // "-N CHAIN" comes first
	for _, r := range want {
		if !same {
			break
		}
		if same, err = ipt.Exists("filter", GuardChain, r...); err != nil {
			return fmt.Errorf("egress guard: %w", err)
		}
	}
	if !same {
		if err := ipt.ClearChain("filter", GuardChain); err != nil {
			return fmt.Errorf("egress guard: %w", err)
		}
		for _, r := range want {
			if err := ipt.Append("filter", GuardChain, r...); err != nil {
				return fmt.Errorf("egress guard rule %q: %w", strings.Join(r, " "), err)
			}
		}
	}
	first, err := isFirst(ipt)
	if err != nil {
		return err
	}
	if !first {
		if err := ipt.DeleteIfExists("filter", "FORWARD", JumpRule()...); err != nil {
			return fmt.Errorf("egress guard jump: %w", err)
		}
		if err := ipt.Insert("filter", "FORWARD", 1, JumpRule()...); err != nil {
			return fmt.Errorf("egress guard jump: %w", err)
		}
	}
	return nil
}

// isFirst reports whether FORWARD's first rule is the jump to the guard.
func isFirst(ipt *goiptables.IPTables) (bool, error) {
	rules, err := ipt.List("filter", "FORWARD")
	if err != nil {
		return false, fmt.Errorf("egress guard: listing FORWARD: %w", err)
	}
	return len(rules) > 1 && strings.HasSuffix(rules[1], "-j "+GuardChain) && strings.Contains(rules[1], guardComment), nil
}

// RemoveEgressGuard removes the jump and the chain.
func RemoveEgressGuard(ipt *goiptables.IPTables) error {
	ok, err := ipt.ChainExists("filter", GuardChain)
	if err != nil || !ok {
		return err
	}
	for {
		exists, err := ipt.Exists("filter", "FORWARD", JumpRule()...)
		if err != nil {
			return fmt.Errorf("egress guard jump: %w", err)
		}
		if !exists {
			break
		}
		if err := ipt.Delete("filter", "FORWARD", JumpRule()...); err != nil {
			return fmt.Errorf("egress guard jump: %w", err)
		}
	}
	if err := ipt.ClearAndDeleteChain("filter", GuardChain); err != nil {
		return fmt.Errorf("egress guard chain: %w", err)
	}
	return nil
}

// Sysctl is one setting under /proc/sys.
type Sysctl struct {
	Name, Value string
	// Optional settings that do not exist (a module not loaded) are
	// skipped.
	Optional bool
}

// Sysctls are the settings the proxy needs: forwarding, bridged traffic
// through iptables, and (for NodePorts on 127.0.0.1) route_localnet.
func Sysctls(localhostNodePorts bool) []Sysctl {
	s := []Sysctl{
		{Name: "net/ipv4/ip_forward", Value: "1"},
		{Name: "net/bridge/bridge-nf-call-iptables", Value: "1", Optional: true},
	}
	if localhostNodePorts {
		s = append(s, Sysctl{Name: "net/ipv4/conf/all/route_localnet", Value: "1"})
	}
	return s
}

// SetSysctls writes the settings that differ.
func SetSysctls(settings []Sysctl) error {
	var errs []error
	for _, s := range settings {
		p := filepath.Join("/proc/sys", s.Name)
		cur, err := os.ReadFile(p)
		if err != nil {
			if s.Optional && errors.Is(err, os.ErrNotExist) {
				continue
			}
			errs = append(errs, fmt.Errorf("sysctl %s: %w", strings.ReplaceAll(s.Name, "/", "."), err))
			continue
		}
		if strings.TrimSpace(string(cur)) == s.Value {
			continue
		}
		if err := os.WriteFile(p, []byte(s.Value), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("sysctl %s=%s: %w", strings.ReplaceAll(s.Name, "/", "."), s.Value, err))
		}
	}
	return errors.Join(errs...)
}

// RouteKeeper puts the service route back as soon as a netlink
// notification says it was deleted (by hand or by another program); the
// proxy's full syncs check it too.
type RouteKeeper struct {
	cidr    *net.IPNet
	onError func(error)
	updates chan netlink.RouteUpdate
	done    chan struct{}
}

// NewRouteKeeper subscribes to route changes (in the calling thread's
// network namespace); Start acts on them.
func NewRouteKeeper(cidr *net.IPNet, onError func(error)) (*RouteKeeper, error) {
	k := &RouteKeeper{cidr: cidr, onError: onError, updates: make(chan netlink.RouteUpdate, 64), done: make(chan struct{})}
	if err := netlink.RouteSubscribe(k.updates, k.done); err != nil {
		return nil, fmt.Errorf("subscribing to route changes: %w", err)
	}
	return k, nil
}

// Start puts the route back after each deletion until ctx ends, then
// closes the subscription.
func (k *RouteKeeper) Start(ctx context.Context) error {
	defer close(k.done)
	for {
		select {
		case <-ctx.Done():
			return nil
		case u, ok := <-k.updates:
			if !ok {
				return errors.New("the route subscription ended")
			}
			if u.Type != unix.RTM_DELROUTE || u.Dst == nil || u.Dst.String() != k.cidr.String() {
				continue
			}
			if err := EnsureServiceRoute(k.cidr); err != nil {
				k.onError(err)
			}
		}
	}
}
