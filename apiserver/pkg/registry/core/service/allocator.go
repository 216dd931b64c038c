package service

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ServiceAllocator gives Services their cluster IP and node ports. Each
// allocation is an etcd key created only if absent, so two API servers
// cannot hand out the same address; it is released when the Service goes.
type ServiceAllocator struct {
	Client   *clientv3.Client
	CIDR     netip.Prefix
	NodePort struct{ Base, Size int }
}

const allocPrefix = "/registry/skiff/allocations/"

func (a *ServiceAllocator) ipKey(ip string) string { return allocPrefix + "serviceips/" + ip }
func (a *ServiceAllocator) portKey(p int32) string {
	return fmt.Sprintf("%snodeports/%d", allocPrefix, p)
}
func svcOwner(svc *corev1.Service) string { return svc.Namespace + "/" + svc.Name }
func needsNodePorts(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer
}

// reserve creates key if it is absent. ours reports that the key is the
// owner's, created that it was absent: only a key this call created may be
// released when what follows fails (a key already the owner's belongs to
// the stored Service of that name, which a failed create must not touch).
func (a *ServiceAllocator) reserve(ctx context.Context, key, owner string) (ours, created bool, err error) {
	resp, err := a.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, owner)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return false, false, err
	}
	if resp.Succeeded {
		return true, true, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	return len(kvs) == 1 && string(kvs[0].Value) == owner, false, nil
}

// take is reserve, or for a dry run what reserve would answer.
func (a *ServiceAllocator) take(ctx context.Context, key, owner string, dry bool) (ours, created bool, err error) {
	if !dry {
		return a.reserve(ctx, key, owner)
	}
	resp, err := a.Client.Get(ctx, key)
	if err != nil {
		return false, false, err
	}
	if len(resp.Kvs) == 0 {
		return true, true, nil
	}
	return string(resp.Kvs[0].Value) == owner, false, nil
}

func (a *ServiceAllocator) release(ctx context.Context, key, owner string) {
	_, _ = a.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(key), "=", owner)).
		Then(clientv3.OpDelete(key)).
		Commit()
}

// size of the usable range: network and broadcast addresses excluded.
func (a *ServiceAllocator) rangeSize() uint32 {
	bits := a.CIDR.Addr().BitLen() - a.CIDR.Bits()
	if bits > 24 {
		bits = 24
	}
	return uint32(1)<<bits - 2
}

func (a *ServiceAllocator) nth(n uint32) string {
	base := a.CIDR.Masked().Addr().As4()
	v := binary.BigEndian.Uint32(base[:]) + 1 + n
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], v)
	return netip.AddrFrom4(out).String()
}

func (a *ServiceAllocator) allocateIP(ctx context.Context, owner string, dry bool) (string, error) {
	size := a.rangeSize()
	// Random probing first, then a full scan: never fails while space is left.
	// The first address is the kubernetes Service's and is never given out at random.
	for i := 0; i < 64; i++ {
		ip := a.nth(1 + rand.Uint32N(size-1))
		if _, fresh, err := a.take(ctx, a.ipKey(ip), owner, dry); err != nil || fresh {
			return ip, err
		}
	}
	for n := uint32(1); n < size; n++ {
		ip := a.nth(n)
		if _, fresh, err := a.take(ctx, a.ipKey(ip), owner, dry); err != nil || fresh {
			return ip, err
		}
	}
	return "", apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
}

func (a *ServiceAllocator) allocatePort(ctx context.Context, owner string, dry bool) (int32, error) {
	for i := 0; i < 64; i++ {
		p := int32(a.NodePort.Base + rand.IntN(a.NodePort.Size))
		if _, fresh, err := a.take(ctx, a.portKey(p), owner, dry); err != nil || fresh {
			return p, err
		}
	}
	for p := a.NodePort.Base; p < a.NodePort.Base+a.NodePort.Size; p++ {
		if _, fresh, err := a.take(ctx, a.portKey(int32(p)), owner, dry); err != nil || fresh {
			return int32(p), err
		}
	}
	return 0, apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
}

// BeforeCreate allocates the cluster IP and node ports of a new Service.
func (a *ServiceAllocator) BeforeCreate(ctx context.Context, obj runtime.Object) (func(), error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return func() {}, nil
	}
	return a.allocate(ctx, svc, nil, false)
}

// DryRunCreate fills in what BeforeCreate would allocate, refusing what
// it would refuse, and keeps nothing, as upstream's dry-run allocators.
func (a *ServiceAllocator) DryRunCreate(ctx context.Context, obj runtime.Object) error {
	if svc, ok := obj.(*corev1.Service); ok {
		_, err := a.allocate(ctx, svc, nil, true)
		return err
	}
	return nil
}

// DryRunUpdate is DryRunCreate for an update.
func (a *ServiceAllocator) DryRunUpdate(ctx context.Context, obj, old runtime.Object) error {
	if svc, ok := obj.(*corev1.Service); ok {
		_, err := a.allocate(ctx, svc, old.(*corev1.Service), true)
		return err
	}
	return nil
}

// BeforeUpdate allocates what an update adds: a cluster IP for a Service
// that stops being ExternalName, node ports for new or changed ports, a
// health check node port. What the update gives up is released by
// AfterUpdate, once the update is stored.
func (a *ServiceAllocator) BeforeUpdate(ctx context.Context, obj, old runtime.Object) (func(), error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return func() {}, nil
	}
	return a.allocate(ctx, svc, old.(*corev1.Service), false)
}

// AfterUpdate releases what the stored update no longer holds: the cluster
// IPs of a Service that became ExternalName, the node ports of one that
// became ClusterIP, ports removed or changed.
func (a *ServiceAllocator) AfterUpdate(ctx context.Context, obj, old runtime.Object) {
	svc, ok1 := obj.(*corev1.Service)
	oldSvc, ok2 := old.(*corev1.Service)
	if !ok1 || !ok2 {
		return
	}
	keep := map[string]bool{}
	for _, k := range a.keysOf(svc) {
		keep[k] = true
	}
	ctx = context.WithoutCancel(ctx)
	for _, k := range a.keysOf(oldSvc) {
		if !keep[k] {
			a.release(ctx, k, svcOwner(oldSvc))
		}
	}
}

// keysOf lists the allocation keys a stored Service holds.
func (a *ServiceAllocator) keysOf(svc *corev1.Service) []string {
	var keys []string
	if needsClusterIP(svc) {
		ips := svc.Spec.ClusterIPs
		if len(ips) == 0 && svc.Spec.ClusterIP != "" {
			ips = []string{svc.Spec.ClusterIP}
		}
		for _, ip := range ips {
			if ip != "" && ip != corev1.ClusterIPNone {
				keys = append(keys, a.ipKey(ip))
			}
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			keys = append(keys, a.portKey(p.NodePort))
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		keys = append(keys, a.portKey(svc.Spec.HealthCheckNodePort))
	}
	return keys
}

func (a *ServiceAllocator) allocate(ctx context.Context, svc, old *corev1.Service, dry bool) (func(), error) {
	owner := svcOwner(svc)
	var keys []string
	// got records a key this call took (none in a dry run).
	got := func(key string) {
		if !dry {
			keys = append(keys, key)
		}
	}
	rollback := func() {
		for _, k := range keys {
			a.release(context.WithoutCancel(ctx), k, owner)
		}
	}
	fail := func(err error) (func(), error) {
		rollback()
		return nil, err
	}
	gk := corev1.SchemeGroupVersion.WithKind("Service").GroupKind()
	held := map[string]bool{}
	if old != nil {
		for _, k := range a.keysOf(old) {
			held[k] = true
		}
	}
	// reserveOrRefuse takes a key the client asked for by value.
	reserveOrRefuse := func(key string, path *field.Path, value any, what string) error {
		if held[key] {
			return nil
		}
		ours, created, err := a.take(ctx, key, owner, dry)
		if err != nil {
			return err
		}
		if !ours {
			return apierrors.NewInvalid(gk, svc.Name, field.ErrorList{field.Invalid(path, value, what)})
		}
		held[key] = true
		if created {
			got(key)
		}
		return nil
	}

	// Cluster IPs: on create, and when an update turns an ExternalName
	// Service (or one stored without an IP) into one that has an IP.
	if needsClusterIP(svc) && !isHeadless(svc) && (old == nil || !needsClusterIP(old) || old.Spec.ClusterIP == "") {
		if svc.Spec.ClusterIP == "" {
			ip, err := a.allocateIP(ctx, owner, dry)
			if err != nil {
				return fail(err)
			}
			got(a.ipKey(ip))
			held[a.ipKey(ip)] = true
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
		} else {
			ip := svc.Spec.ClusterIP
			path := field.NewPath("spec", "clusterIPs").Index(0)
			addr, err := netip.ParseAddr(ip)
			if err != nil {
				return fail(apierrors.NewInvalid(gk, svc.Name, field.ErrorList{field.Invalid(path, ip, "must be a valid IP address")}))
			}
			if !a.CIDR.Contains(addr) {
				return fail(apierrors.NewInvalid(gk, svc.Name, field.ErrorList{field.Invalid(path, ip,
					fmt.Sprintf("failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, ip, a.CIDR))}))
			}
			if err := reserveOrRefuse(a.ipKey(ip), path, ip, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", ip)); err != nil {
				return fail(err)
			}
			if len(svc.Spec.ClusterIPs) == 0 {
				svc.Spec.ClusterIPs = []string{ip}
			}
		}
	}

	// Node ports: those asked for are reserved; those left at 0 are given
	// unless a LoadBalancer says allocateLoadBalancerNodePorts: false. A
	// service port number served over two protocols gets one node port.
	if needsNodePorts(svc.Spec.Type) {
		byPort := map[int32]int32{}
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				if _, ok := byPort[p.Port]; !ok {
					byPort[p.Port] = p.NodePort
				}
			}
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 {
				if !shouldAllocateNodePorts(svc) {
					continue
				}
				if np, ok := byPort[p.Port]; ok {
					p.NodePort = np
					continue
				}
				port, err := a.allocatePort(ctx, owner, dry)
				if err != nil {
					return fail(err)
				}
				got(a.portKey(port))
				held[a.portKey(port)] = true
				p.NodePort, byPort[p.Port] = port, port
				continue
			}
			path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			if err := a.checkPortRange(gk, svc.Name, path, p.NodePort); err != nil {
				return fail(err)
			}
			if err := reserveOrRefuse(a.portKey(p.NodePort), path, p.NodePort, "provided port is already allocated"); err != nil {
				return fail(err)
			}
		}
	}

	// The health check node port of a LoadBalancer with
	// externalTrafficPolicy: Local.
	if needsHCNodePort(svc) {
		if hc := svc.Spec.HealthCheckNodePort; hc != 0 {
			path := field.NewPath("spec", "healthCheckNodePort")
			if err := a.checkPortRange(gk, svc.Name, path, hc); err != nil {
				return fail(err)
			}
			if err := reserveOrRefuse(a.portKey(hc), path, hc, "provided port is already allocated"); err != nil {
				return fail(err)
			}
		} else {
			port, err := a.allocatePort(ctx, owner, dry)
			if err != nil {
				return fail(err)
			}
			got(a.portKey(port))
			svc.Spec.HealthCheckNodePort = port
		}
	}
	return rollback, nil
}

func (a *ServiceAllocator) checkPortRange(gk schema.GroupKind, name string, path *field.Path, port int32) error {
	if int(port) < a.NodePort.Base || int(port) >= a.NodePort.Base+a.NodePort.Size {
		return apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(path, port,
			fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", a.NodePort.Base, a.NodePort.Base+a.NodePort.Size-1))})
	}
	return nil
}

// AfterDelete releases what the Service held.
func (a *ServiceAllocator) AfterDelete(ctx context.Context, obj runtime.Object) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, k := range a.keysOf(svc) {
		a.release(ctx, k, svcOwner(svc))
	}
}

// FirstIP is the first address of the range, the kubernetes Service's.
func (a *ServiceAllocator) FirstIP() string { return a.nth(0) }
