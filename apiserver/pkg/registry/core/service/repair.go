package service

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// Event reasons and actions of the repair, upstream's.
const (
	ReasonClusterIPNotValid         = "ClusterIPNotValid"
	ReasonClusterIPNotAllocated     = "ClusterIPNotAllocated"
	ReasonClusterIPAlreadyAllocated = "ClusterIPAlreadyAllocated"
	ReasonClusterIPOutOfRange       = "ClusterIPOutOfRange"
	ReasonPortNotAllocated          = "PortNotAllocated"
	ReasonPortAlreadyAllocated      = "PortAlreadyAllocated"
	ReasonPortOutOfRange            = "PortOutOfRange"

	ActionClusterIPAllocation = "ClusterIPAllocation"
	ActionPortAllocation      = "PortAllocation"

	IPRepairController   = "ipallocator-repair-controller"
	PortRepairController = "portallocator-repair-controller"
)

// RepairEvent is a Warning the repair reports on a Service.
type RepairEvent struct {
	Service                          *corev1.Service
	Controller, Reason, Action, Note string
}

// ServiceRepair makes the allocation keys agree with the stored Services,
// as upstream's ipallocator and portallocator repair controllers do: a
// Service whose cluster IP or node port has no key gets it (reported as
// ClusterIPNotAllocated or PortNotAllocated), two Services claiming one
// value are reported (…AlreadyAllocated), values outside the ranges are
// reported (…OutOfRange), and a key no Service claims (a crash between
// allocating and storing) is freed once it has been seen unclaimed in
// LeakPasses passes in a row, so that a Service being created is left
// alone. Every write is an etcd transaction that compares what the pass
// read, so several API servers may run it at once.
type ServiceRepair struct {
	Alloc *ServiceAllocator
	// Services lists every stored Service.
	Services func(ctx context.Context) ([]corev1.Service, error)
	// Event records a Warning on a Service.
	Event func(ctx context.Context, e RepairEvent)
	// LeakPasses is how many passes in a row a key must be unclaimed before
	// it is freed; 0 means upstream's 3.
	LeakPasses int
	// Found, when set, counts what a pass found: kind "ip" or "port", and
	// upstream's error type (leak, repair, duplicate, outOfRange, invalid).
	Found func(kind, errType string)

	// leaks counts, per key, the passes that found it unclaimed.
	leaks map[string]int
}

type allocKey struct {
	owner  string
	modRev int64
}

// claim is one Service's use of one allocation key.
type claim struct {
	svc  *corev1.Service
	kind string // "ip" or "port"
	val  string
}

// RunOnce makes one pass.
func (r *ServiceRepair) RunOnce(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if r.leaks == nil {
		r.leaks = map[string]int{}
	}
	passes := r.LeakPasses
	if passes <= 0 {
		passes = 3
	}
	a := r.Alloc
	// The keys first, then the Services: a Service stored after the keys
	// were read holds keys this pass did not see, which it then finds
	// already its own.
	resp, err := a.Client.Get(ctx, allocPrefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("reading the allocations: %w", err)
	}
	stored := map[string]allocKey{}
	for _, kv := range resp.Kvs {
		stored[string(kv.Key)] = allocKey{owner: string(kv.Value), modRev: kv.ModRevision}
	}
	svcs, err := r.Services(ctx)
	if err != nil {
		return fmt.Errorf("listing services: %w", err)
	}
	sort.SliceStable(svcs, func(i, j int) bool {
		return svcs[i].CreationTimestamp.Before(&svcs[j].CreationTimestamp)
	})

	claims := map[string][]claim{}
	for i := range svcs {
		svc := &svcs[i]
		r.collectClaims(ctx, svc, claims)
	}

	keys := make([]string, 0, len(claims))
	for k := range claims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		cs := claims[key]
		delete(r.leaks, key)
		cur, exists := stored[key]
		// The holder: the Service that owns the key, or the oldest claimant.
		holder := cs[0]
		for _, c := range cs {
			if exists && svcOwner(c.svc) == cur.owner {
				holder = c
				break
			}
		}
		for _, c := range cs {
			if c.svc != holder.svc {
				r.found(c.kind, "duplicate")
				r.report(ctx, c, alreadyAllocated(c))
			}
		}
		owner := svcOwner(holder.svc)
		switch {
		case exists && cur.owner == owner:
			continue
		case !exists:
			ok, err := a.Client.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, owner)).Commit()
			if err != nil {
				return err
			}
			if ok.Succeeded {
				r.found(holder.kind, "repair")
				r.report(ctx, holder, notAllocated(holder))
			}
		default:
			// Held by a Service that no longer claims it: it is the claimant's.
			ok, err := a.Client.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision(key), "=", cur.modRev)).
				Then(clientv3.OpPut(key, owner)).Commit()
			if err != nil {
				return err
			}
			if ok.Succeeded {
				r.found(holder.kind, "repair")
				r.report(ctx, holder, notAllocated(holder))
			}
		}
	}

	for key, cur := range stored {
		if _, claimed := claims[key]; claimed {
			continue
		}
		r.leaks[key]++
		if r.leaks[key] < passes {
			logger.V(2).Info("allocation may have leaked: flagging for later clean up", "key", key, "owner", cur.owner, "passes", r.leaks[key])
			continue
		}
		delete(r.leaks, key)
		if _, err := a.Client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", cur.modRev)).
			Then(clientv3.OpDelete(key)).Commit(); err != nil {
			return err
		}
		logger.Info("allocation leaked: released", "key", key, "owner", cur.owner)
		kind := "port"
		if strings.HasPrefix(key, a.ipKey("")) {
			kind = "ip"
		}
		r.found(kind, "leak")
	}
	for key := range r.leaks {
		if _, ok := stored[key]; !ok {
			delete(r.leaks, key)
		}
	}
	return nil
}

// collectClaims adds the keys svc claims, reporting values that cannot be
// allocated at all.
func (r *ServiceRepair) collectClaims(ctx context.Context, svc *corev1.Service, claims map[string][]claim) {
	a := r.Alloc
	if needsClusterIP(svc) {
		ips := svc.Spec.ClusterIPs
		if len(ips) == 0 && svc.Spec.ClusterIP != "" {
			ips = []string{svc.Spec.ClusterIP}
		}
		for i, ip := range ips {
			if ip == "" || ip == corev1.ClusterIPNone {
				continue
			}
			fam := clusterIPFamily
			if i < len(svc.Spec.IPFamilies) {
				fam = svc.Spec.IPFamilies[i]
			}
			addr, err := netip.ParseAddr(ip)
			c := claim{svc: svc, kind: "ip", val: ip}
			switch {
			case err != nil:
				r.found("ip", "invalid")
				r.report(ctx, c, RepairEvent{Controller: IPRepairController, Reason: ReasonClusterIPNotValid, Action: ActionClusterIPAllocation,
					Note: fmt.Sprintf("Cluster IP [%s]:%s is not a valid IP; please recreate service", fam, ip)})
			case !a.CIDR.Contains(addr):
				r.found("ip", "outOfRange")
				r.report(ctx, c, RepairEvent{Controller: IPRepairController, Reason: ReasonClusterIPOutOfRange, Action: ActionClusterIPAllocation,
					Note: fmt.Sprintf("Cluster IP [%s]:%s is not within the configured Service CIDR %s; please recreate service", fam, ip, a.CIDR)})
			default:
				key := a.ipKey(ip)
				claims[key] = append(claims[key], c)
			}
		}
	}
	seen := map[int32]bool{}
	ports := nodePortsOf(svc)
	if svc.Spec.HealthCheckNodePort != 0 {
		ports = append(ports, svc.Spec.HealthCheckNodePort)
	}
	for _, p := range ports {
		if p == 0 || seen[p] {
			continue
		}
		seen[p] = true
		c := claim{svc: svc, kind: "port", val: strconv.Itoa(int(p))}
		if int(p) < a.NodePort.Base || int(p) >= a.NodePort.Base+a.NodePort.Size {
			r.found("port", "outOfRange")
			r.report(ctx, c, RepairEvent{Controller: PortRepairController, Reason: ReasonPortOutOfRange, Action: ActionPortAllocation,
				Note: fmt.Sprintf("Port %d is not within the port range %d-%d; please recreate service", p, a.NodePort.Base, a.NodePort.Base+a.NodePort.Size-1)})
			continue
		}
		key := a.portKey(p)
		claims[key] = append(claims[key], c)
	}
}

func familyLabel(c claim) corev1.IPFamily {
	for i, ip := range c.svc.Spec.ClusterIPs {
		if ip == c.val && i < len(c.svc.Spec.IPFamilies) {
			return c.svc.Spec.IPFamilies[i]
		}
	}
	return clusterIPFamily
}

func notAllocated(c claim) RepairEvent {
	if c.kind == "ip" {
		return RepairEvent{Controller: IPRepairController, Reason: ReasonClusterIPNotAllocated, Action: ActionClusterIPAllocation,
			Note: fmt.Sprintf("Cluster IP [%s]:%s is not allocated; repairing", familyLabel(c), c.val)}
	}
	return RepairEvent{Controller: PortRepairController, Reason: ReasonPortNotAllocated, Action: ActionPortAllocation,
		Note: fmt.Sprintf("Port %s is not allocated; repairing", c.val)}
}

func alreadyAllocated(c claim) RepairEvent {
	if c.kind == "ip" {
		return RepairEvent{Controller: IPRepairController, Reason: ReasonClusterIPAlreadyAllocated, Action: ActionClusterIPAllocation,
			Note: fmt.Sprintf("Cluster IP [%s]:%s was assigned to multiple services; please recreate service", familyLabel(c), c.val)}
	}
	return RepairEvent{Controller: PortRepairController, Reason: ReasonPortAlreadyAllocated, Action: ActionPortAllocation,
		Note: fmt.Sprintf("Port %s was assigned to multiple services; please recreate service", c.val)}
}

func (r *ServiceRepair) found(kind, errType string) {
	if r.Found != nil {
		r.Found(kind, errType)
	}
}

func (r *ServiceRepair) report(ctx context.Context, c claim, e RepairEvent) {
	e.Service = c.svc
	klog.FromContext(ctx).Info("service allocation repaired or refused", "service", klog.KObj(c.svc), "reason", e.Reason, "note", e.Note)
	if r.Event != nil {
		r.Event(ctx, e)
	}
}
