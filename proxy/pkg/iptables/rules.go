package iptables

import (
	"bytes"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/proxy/pkg/servicemap"
)

// LargeClusterEndpoints is upstream's largeClusterEndpointsThreshold:
// with more endpoints than this, the per-endpoint rules lose their
// comments, which makes iptables-restore's input much smaller.
const LargeClusterEndpoints = 1000

// RuleOptions is the node-wide part of the rules.
type RuleOptions struct {
	// NodeName picks the local endpoints for the Local traffic policies.
	NodeName string
	// NodeIPs are this node's addresses (loadBalancerSourceRanges that
	// contain one also admit traffic from the load balancer IP itself).
	NodeIPs []net.IP
	// ClusterCIDR is the pod network: traffic from outside it to a
	// cluster IP is masqueraded; pod egress out of it too, when
	// MasqueradePodEgress.
	ClusterCIDR *net.IPNet
	// MasqueradeBit is the fwmark bit (0-31) that asks for SNAT.
	MasqueradeBit int
	// LocalhostNodePorts admits NodePorts on 127.0.0.1 (with
	// net.ipv4.conf.all.route_localnet=1) and drops martian localnet
	// traffic that does not come from loopback.
	LocalhostNodePorts bool
	// MasqueradePodEgress masquerades traffic from ClusterCIDR to outside it.
	MasqueradePodEgress bool
}

// Snapshot is the Services and endpoints to program.
type Snapshot struct {
	// Ports are every ServicePort, in any order (Write sorts them).
	Ports     []*servicemap.ServicePort
	Endpoints map[servicemap.ServicePortName][]*servicemap.Endpoint
}

// Plan says which per-Service chains a sync writes.
type Plan struct {
	// Full writes every chain; otherwise only the chains of the Services
	// in Changed and the chains missing from Existing are written, and
	// the others are left as they are in the kernel (iptables-restore
	// --noflush keeps the chains the input does not name).
	Full    bool
	Changed map[types.NamespacedName]bool
	// Existing is the per-Service nat chains the kernel has; those no
	// Service wants are deleted.
	Existing map[string]bool
	// Kept is the previous Result's Kept: the chains and rule counts of
	// the ports a partial sync does not write are taken from it instead
	// of being computed again.
	Kept map[servicemap.ServicePortName]PortChains
	// Kernel, in a full sync, is the rules the kernel's per-Service
	// chains hold (ParseRules of iptables-save): a Service whose chains
	// hold exactly the rules it wants is left as it is, any other one is
	// rewritten. Nil: a full sync rewrites every chain.
	Kernel map[string][]string
}

// PortChains are the per-Service chains of one port and how many rules
// they hold.
type PortChains struct {
	Chains []string
	Rules  int
}

// Result is the iptables-restore input and what it leaves in place.
type Result struct {
	Data []byte
	// Active is every per-Service nat chain the rules use.
	Active map[string]bool
	// Rules counts the rules per table that the kernel holds after the
	// restore (written or kept).
	Rules map[string]int
	// Written counts the per-Service chains written.
	Written int
	// Deleted lists the stale chains deleted.
	Deleted []string
	// Kept is every port's chains, for the next Plan.
	Kept map[servicemap.ServicePortName]PortChains
	// Created lists the chains the restore creates, in the order the
	// Services were written (see Proxier.precreate).
	Created []string
}

// Write builds the iptables-restore input (tables filter and nat) for
// the snapshot; a pure function of its arguments.
func Write(snap *Snapshot, o *RuleOptions, plan Plan) *Result {
	g := newGenerator(o, snap)
	ports := append([]*servicemap.ServicePort(nil), snap.Ports...)
	sort.Slice(ports, func(i, j int) bool { return portLess(ports[i], ports[j]) })
	for _, p := range ports {
		write := (plan.Full && plan.Kernel == nil) || plan.Changed[p.Name.NamespacedName]
		g.port(p, snap.Endpoints[p.Name], write, plan)
	}
	return g.finish(plan)
}

func portLess(a, b *servicemap.ServicePort) bool {
	if a.Name.NamespacedName != b.Name.NamespacedName {
		return a.Name.NamespacedName.String() < b.Name.NamespacedName.String()
	}
	if a.Name.Port != b.Name.Port {
		return a.Name.Port < b.Name.Port
	}
	return a.Protocol < b.Protocol
}

// buffer is one section of the restore input.
type buffer struct {
	bytes.Buffer
	lines int
}

func (b *buffer) line(args ...string) {
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a)
	}
	b.WriteByte('\n')
	b.lines++
}

type generator struct {
	o          *RuleOptions
	mark       string
	large      bool
	filter     buffer
	natChains  []string
	natTop     buffer
	natSvc     buffer
	scratch    buffer // a skipped Service's chains, built only to be counted
	active     map[string]bool
	kept       map[servicemap.ServicePortName]PortChains
	created    []string
	written    int
	keptRules  int
	clusterSrc string
}

func newGenerator(o *RuleOptions, snap *Snapshot) *generator {
	n := 0
	for _, eps := range snap.Endpoints {
		n += len(eps)
	}
	g := &generator{
		o: o, mark: fmt.Sprintf("%#x", uint32(1)<<uint(o.MasqueradeBit)), large: n > LargeClusterEndpoints,
		active: map[string]bool{}, kept: map[servicemap.ServicePortName]PortChains{},
	}
	if o.ClusterCIDR != nil {
		g.clusterSrc = o.ClusterCIDR.String()
	}
	g.header()
	return g
}

// header writes the rules that do not depend on Services.
func (g *generator) header() {
	masq := g.mark + "/" + g.mark
	if g.o.MasqueradePodEgress && g.clusterSrc != "" {
		g.natTop.line("-A", ChainPostrouting, "-m", "comment", "--comment", `"skiff pod egress"`,
			"-s", g.clusterSrc, "!", "-d", g.clusterSrc, "-j", "MASQUERADE", "--random-fully")
	}
	g.natTop.line("-A", ChainPostrouting, "-m", "mark", "!", "--mark", masq, "-j", "RETURN")
	g.natTop.line("-A", ChainPostrouting, "-j", "MARK", "--xor-mark", g.mark)
	g.natTop.line("-A", ChainPostrouting, "-m", "comment", "--comment", `"skiff service traffic requiring SNAT"`,
		"-j", "MASQUERADE", "--random-fully")
	g.natTop.line("-A", ChainMarkMasq, "-j", "MARK", "--or-mark", g.mark)

	g.filter.line("-A", ChainForward, "-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP")
	g.filter.line("-A", ChainForward, "-m", "comment", "--comment", `"skiff forwarding rules"`,
		"-m", "mark", "--mark", masq, "-j", "ACCEPT")
	g.filter.line("-A", ChainForward, "-m", "comment", "--comment", `"skiff forwarding conntrack rule"`,
		"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
	if g.o.LocalhostNodePorts {
		g.filter.line("-A", ChainFirewall, "-m", "comment", "--comment", `"block incoming localnet connections"`,
			"-d", "127.0.0.0/8", "!", "-s", "127.0.0.0/8",
			"-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED,DNAT", "-j", "DROP")
	}
}

func (g *generator) comment(c string) []string {
	return []string{"-m", "comment", "--comment", c}
}

// port writes one ServicePort's rules: always its rules in the top-level
// chains; its own chains only when write (or when one is missing).
func (g *generator) port(p *servicemap.ServicePort, eps []*servicemap.Endpoint, write bool, plan Plan) {
	name := p.Name.String()
	proto := strings.ToLower(string(p.Protocol))
	port := strconv.Itoa(p.Port)
	ch := chainsOf(p)
	cluster, local, all, hasEndpoints := servicemap.Categorize(eps, p, g.o.NodeName)

	usesClusterChain := len(cluster) > 0 && p.UsesClusterEndpoints()
	usesLocalChain := len(local) > 0 && p.UsesLocalEndpoints()
	internalChain, hasInternal := ch.svc, hasEndpoints
	if p.InternalPolicyLocal {
		internalChain = ch.svl
		hasInternal = hasInternal && len(local) > 0
	}
	externalPolicyChain, hasExternal := ch.svc, hasEndpoints
	if p.ExternalPolicyLocal {
		externalPolicyChain = ch.svl
		hasExternal = hasExternal && len(local) > 0
	}
	usesExtChain := hasEndpoints && p.ExternallyAccessible()
	usesFWChain := hasEndpoints && len(p.LoadBalancerVIPs) > 0 && len(p.LoadBalancerSourceRanges) > 0
	lbChain := ch.ext
	if usesFWChain {
		lbChain = ch.fw
	}
	var internalFilter, externalFilter, internalComment, externalComment string
	reject := []string{"REJECT", "--reject-with", "icmp-port-unreachable"}
	var internalTarget, externalTarget []string
	if !hasEndpoints {
		internalComment = fmt.Sprintf(`"%s has no endpoints"`, name)
		externalComment = internalComment
		internalTarget, externalTarget = reject, reject
	} else {
		if !hasInternal {
			internalComment = fmt.Sprintf(`"%s has no local endpoints"`, name)
			internalTarget = []string{"DROP"}
		}
		if !hasExternal {
			externalComment = fmt.Sprintf(`"%s has no local endpoints"`, name)
			externalTarget = []string{"DROP"}
		}
	}
	internalFilter, externalFilter = strings.Join(internalTarget, " "), strings.Join(externalTarget, " ")
	clusterIP := p.ClusterIP.String()

	// The top-level chains, always written.
	if hasInternal {
		g.natTop.line(cat([]string{"-A", ChainServices}, g.comment(fmt.Sprintf(`"%s cluster IP"`, name)),
			[]string{"-m", proto, "-p", proto, "-d", clusterIP, "--dport", port, "-j", internalChain})...)
	} else {
		g.filter.line(cat([]string{"-A", ChainServices}, g.comment(internalComment),
			[]string{"-m", proto, "-p", proto, "-d", clusterIP, "--dport", port, "-j", internalFilter})...)
	}
	for _, ip := range p.ExternalIPs {
		if hasEndpoints {
			g.natTop.line(cat([]string{"-A", ChainServices}, g.comment(fmt.Sprintf(`"%s external IP"`, name)),
				[]string{"-m", proto, "-p", proto, "-d", ip.String(), "--dport", port, "-j", ch.ext})...)
		}
		if !hasExternal {
			g.filter.line(cat([]string{"-A", ChainExternalServices}, g.comment(externalComment),
				[]string{"-m", proto, "-p", proto, "-d", ip.String(), "--dport", port, "-j", externalFilter})...)
		}
	}
	for _, ip := range p.LoadBalancerVIPs {
		if hasEndpoints {
			g.natTop.line(cat([]string{"-A", ChainServices}, g.comment(fmt.Sprintf(`"%s loadbalancer IP"`, name)),
				[]string{"-m", proto, "-p", proto, "-d", ip.String(), "--dport", port, "-j", lbChain})...)
		}
		if usesFWChain {
			g.filter.line(cat([]string{"-A", ChainProxyFirewall}, g.comment(fmt.Sprintf(`"%s traffic not accepted by %s"`, name, ch.fw)),
				[]string{"-m", proto, "-p", proto, "-d", ip.String(), "--dport", port, "-j", "DROP"})...)
		}
	}
	if !hasExternal {
		for _, ip := range p.LoadBalancerVIPs {
			g.filter.line(cat([]string{"-A", ChainExternalServices}, g.comment(externalComment),
				[]string{"-m", proto, "-p", proto, "-d", ip.String(), "--dport", port, "-j", externalFilter})...)
		}
	}
	if p.NodePort != 0 {
		np := strconv.Itoa(p.NodePort)
		if hasEndpoints {
			g.natTop.line(cat([]string{"-A", ChainNodePorts}, g.comment(name),
				[]string{"-m", proto, "-p", proto, "--dport", np, "-j", ch.ext})...)
		}
		if !hasExternal {
			g.filter.line(cat([]string{"-A", ChainExternalServices}, g.comment(externalComment),
				[]string{"-m", "addrtype", "--dst-type", "LOCAL", "-m", proto, "-p", proto, "--dport", np, "-j", externalFilter})...)
		}
	}
	if p.HealthCheckNodePort != 0 {
		g.filter.line(cat([]string{"-A", ChainNodePorts}, g.comment(fmt.Sprintf(`"%s health check node port"`, name)),
			[]string{"-m", "tcp", "-p", "tcp", "--dport", strconv.Itoa(p.HealthCheckNodePort), "-j", "ACCEPT"})...)
	}

	// The Service's own chains: when they are kept as they are and known
	// from the previous sync, only counted.
	if prev, ok := plan.Kept[p.Name]; ok && !write && plan.Kernel == nil {
		missing := false
		for _, c := range prev.Chains {
			g.active[c] = true
			missing = missing || (plan.Existing != nil && !plan.Existing[c])
		}
		if !missing {
			g.keptRules += prev.Rules
			g.kept[p.Name] = prev
			return
		}
		write = true
	}
	var wanted []string
	if usesExtChain {
		wanted = append(wanted, ch.ext)
	}
	if usesFWChain {
		wanted = append(wanted, ch.fw)
	}
	if usesClusterChain {
		wanted = append(wanted, ch.svc)
	}
	if usesLocalChain {
		wanted = append(wanted, ch.svl)
	}
	for _, e := range all {
		wanted = append(wanted, endpointChain(p, e))
	}
	for _, c := range wanted {
		g.active[c] = true
		if plan.Existing != nil && !plan.Existing[c] {
			write = true
		}
	}
	out := &g.scratch
	out.Reset()
	out.lines = 0

	if hasInternal && g.clusterSrc != "" {
		out.line(cat([]string{"-A", internalChain}, g.comment(fmt.Sprintf(`"%s cluster IP"`, name)),
			[]string{"-m", proto, "-p", proto, "-d", clusterIP, "--dport", port, "!", "-s", g.clusterSrc, "-j", ChainMarkMasq})...)
	}
	if usesExtChain {
		if !p.ExternalPolicyLocal {
			out.line(cat([]string{"-A", ch.ext}, g.comment(fmt.Sprintf(`"masquerade traffic for %s external destinations"`, name)),
				[]string{"-j", ChainMarkMasq})...)
		} else {
			if g.clusterSrc != "" {
				out.line(cat([]string{"-A", ch.ext}, g.comment(fmt.Sprintf(`"pod traffic for %s external destinations"`, name)),
					[]string{"-s", g.clusterSrc, "-j", ch.svc})...)
			}
			out.line(cat([]string{"-A", ch.ext}, g.comment(fmt.Sprintf(`"masquerade LOCAL traffic for %s external destinations"`, name)),
				[]string{"-m", "addrtype", "--src-type", "LOCAL", "-j", ChainMarkMasq})...)
			out.line(cat([]string{"-A", ch.ext}, g.comment(fmt.Sprintf(`"route LOCAL traffic for %s external destinations"`, name)),
				[]string{"-m", "addrtype", "--src-type", "LOCAL", "-j", ch.svc})...)
		}
		if hasExternal {
			out.line("-A", ch.ext, "-j", externalPolicyChain)
		}
	}
	if usesFWChain {
		fwArgs := cat([]string{"-A", ch.fw}, g.comment(fmt.Sprintf(`"%s loadbalancer IP"`, name)))
		fromNode := false
		for _, cidr := range p.LoadBalancerSourceRanges {
			out.line(cat(fwArgs, []string{"-s", cidr.String(), "-j", ch.ext})...)
			for _, ip := range g.o.NodeIPs {
				fromNode = fromNode || cidr.Contains(ip)
			}
		}
		if fromNode {
			for _, ip := range p.LoadBalancerVIPs {
				out.line(cat(fwArgs, []string{"-s", ip.String(), "-j", ch.ext})...)
			}
		}
	}
	if usesClusterChain {
		g.balance(out, p, ch.svc, cluster)
	}
	if usesLocalChain {
		g.balance(out, p, ch.svl, local)
	}
	for _, e := range all {
		sep := endpointChain(p, e)
		args := []string{"-A", sep}
		if !g.large {
			args = append(args, g.comment(name)...)
		}
		out.line(cat(args, []string{"-s", e.IP, "-j", ChainMarkMasq})...)
		if p.ClientIPAffinity() {
			args = append(args, "-m", "recent", "--name", sep, "--set")
		}
		out.line(cat(args, []string{"-m", proto, "-p", proto, "-j", "DNAT", "--to-destination", e.String()})...)
	}
	if !write && plan.Kernel != nil && !sameRules(out.Bytes(), wanted, plan.Kernel) {
		write = true
	}
	if write {
		g.written++
		g.natChains = append(g.natChains, wanted...)
		for _, c := range wanted {
			if !plan.Existing[c] {
				g.created = append(g.created, c)
			}
		}
		g.natSvc.Write(out.Bytes())
		g.natSvc.lines += out.lines
	} else {
		g.keptRules += out.lines
	}
	g.kept[p.Name] = PortChains{Chains: wanted, Rules: out.lines}
}

// balance writes the rules of a policy chain: affinity first, then one
// rule per endpoint, each taken with probability 1/(endpoints left).
func (g *generator) balance(out *buffer, p *servicemap.ServicePort, chain string, eps []*servicemap.Endpoint) {
	name := p.Name.String()
	if p.ClientIPAffinity() {
		for _, e := range eps {
			sep := endpointChain(p, e)
			out.line(cat([]string{"-A", chain}, g.comment(fmt.Sprintf(`"%s -> %s"`, name, e.String())),
				[]string{"-m", "recent", "--name", sep, "--rcheck", "--seconds", strconv.Itoa(p.StickyMaxAgeSeconds), "--reap", "-j", sep})...)
		}
	}
	n := len(eps)
	for i, e := range eps {
		args := []string{"-A", chain}
		if !g.large {
			args = append(args, g.comment(fmt.Sprintf(`"%s -> %s"`, name, e.String()))...)
		}
		if i < n-1 {
			args = append(args, "-m", "statistic", "--mode", "random", "--probability", probability(n-i))
		}
		out.line(cat(args, []string{"-j", endpointChain(p, e)})...)
	}
}

// probability is upstream's: 1/n with ten decimals.
func probability(n int) string { return fmt.Sprintf("%0.10f", 1.0/float64(n)) }

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// finish closes the top-level chains, deletes stale chains and joins the
// sections.
func (g *generator) finish(plan Plan) *Result {
	// The NodePorts catch-all must be the last rule of SKIFF-SERVICES.
	g.natTop.line("-A", ChainServices, "-m", "comment", "--comment",
		`"skiff service nodeports; NOTE: this must be the last rule in this chain"`,
		"-m", "addrtype", "--dst-type", "LOCAL", "-j", ChainNodePorts)
	var stale []string
	for c := range plan.Existing {
		if isServiceChain(c) && !g.active[c] {
			stale = append(stale, c)
		}
	}
	sort.Strings(stale)

	// The chains are declared in reverse name order: iptables-nft keeps
	// its chain cache sorted, and declaring 10,000 chains in hash order
	// makes iptables-restore three to five times slower (measured with
	// iptables 1.8.9; see docs/proxy.md).
	chains := append(g.natChains, stale...)
	sort.Sort(sort.Reverse(sort.StringSlice(chains)))

	var b bytes.Buffer
	b.Grow(g.filter.Len() + 32*len(chains) + g.natTop.Len() + g.natSvc.Len() + 4096)
	b.WriteString("*filter\n")
	for _, c := range filterTopChains {
		fmt.Fprintf(&b, ":%s - [0:0]\n", c)
	}
	b.Write(g.filter.Bytes())
	b.WriteString("COMMIT\n*nat\n")
	for _, c := range natTopChains {
		fmt.Fprintf(&b, ":%s - [0:0]\n", c)
	}
	for _, c := range chains {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	b.Write(g.natTop.Bytes())
	b.Write(g.natSvc.Bytes())
	for _, c := range stale {
		fmt.Fprintf(&b, "-X %s\n", c)
	}
	b.WriteString("COMMIT\n")
	return &Result{
		Data: b.Bytes(), Active: g.active, Written: g.written, Deleted: stale, Kept: g.kept, Created: g.created,
		Rules: map[string]int{
			TableFilter: g.filter.lines,
			TableNAT:    g.natTop.lines + g.natSvc.lines + g.keptRules,
		},
	}
}

// ProtocolOf is the lower-case protocol iptables matches on.
func ProtocolOf(p corev1.Protocol) string { return strings.ToLower(string(p)) }
