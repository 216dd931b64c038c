package registry

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

// reserve creates key if it is absent (or already ours).
func (a *ServiceAllocator) reserve(ctx context.Context, key, owner string) (bool, error) {
	resp, err := a.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, owner)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return false, err
	}
	if resp.Succeeded {
		return true, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	return len(kvs) == 1 && string(kvs[0].Value) == owner, nil
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

func (a *ServiceAllocator) allocateIP(ctx context.Context, owner string) (string, error) {
	size := a.rangeSize()
	// Random probing first, then a full scan: never fails while space is left.
	// The first address is the kubernetes Service's and is never given out at random.
	for i := 0; i < 64; i++ {
		ip := a.nth(1 + rand.Uint32N(size-1))
		if ok, err := a.reserve(ctx, a.ipKey(ip), owner); err != nil || ok {
			return ip, err
		}
	}
	for n := uint32(1); n < size; n++ {
		ip := a.nth(n)
		if ok, err := a.reserve(ctx, a.ipKey(ip), owner); err != nil || ok {
			return ip, err
		}
	}
	return "", apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
}

func (a *ServiceAllocator) allocatePort(ctx context.Context, owner string) (int32, error) {
	for i := 0; i < 64; i++ {
		p := int32(a.NodePort.Base + rand.IntN(a.NodePort.Size))
		if ok, err := a.reserve(ctx, a.portKey(p), owner); err != nil || ok {
			return p, err
		}
	}
	for p := a.NodePort.Base; p < a.NodePort.Base+a.NodePort.Size; p++ {
		if ok, err := a.reserve(ctx, a.portKey(int32(p)), owner); err != nil || ok {
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
	var keys []string
	rollback := func() {
		for _, k := range keys {
			a.release(context.WithoutCancel(ctx), k, svcOwner(svc))
		}
	}
	if err := a.allocate(ctx, svc, nil, &keys); err != nil {
		rollback()
		return nil, err
	}
	return rollback, nil
}

// BeforeUpdate keeps allocations across updates and adds node ports when a
// Service becomes NodePort or LoadBalancer.
func (a *ServiceAllocator) BeforeUpdate(ctx context.Context, obj, old runtime.Object) (func(), error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return func() {}, nil
	}
	oldSvc := old.(*corev1.Service)
	var keys []string
	rollback := func() {
		for _, k := range keys {
			a.release(context.WithoutCancel(ctx), k, svcOwner(svc))
		}
	}
	if err := a.allocate(ctx, svc, oldSvc, &keys); err != nil {
		rollback()
		return nil, err
	}
	return rollback, nil
}

func (a *ServiceAllocator) allocate(ctx context.Context, svc, old *corev1.Service, keys *[]string) error {
	owner := svcOwner(svc)
	gk := corev1.SchemeGroupVersion.WithKind("Service").GroupKind()
	if old != nil {
		// Upstream's patchAllocatedValues: an update that leaves these out keeps them.
		if svc.Spec.ClusterIP == "" && svc.Spec.Type != corev1.ServiceTypeExternalName {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
			svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = old.Spec.IPFamilies, old.Spec.IPFamilyPolicy
		}
		if needsNodePorts(svc.Spec.Type) && needsNodePorts(old.Spec.Type) {
			oldPorts := map[string]int32{}
			for _, p := range old.Spec.Ports {
				oldPorts[fmt.Sprintf("%s/%d", p.Protocol, p.Port)] = p.NodePort
			}
			for i := range svc.Spec.Ports {
				p := &svc.Spec.Ports[i]
				if p.NodePort == 0 {
					p.NodePort = oldPorts[fmt.Sprintf("%s/%d", p.Protocol, p.Port)]
				}
			}
		}
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName && (old == nil || old.Spec.ClusterIP == "") {
		switch svc.Spec.ClusterIP {
		case corev1.ClusterIPNone:
			svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
		case "":
			ip, err := a.allocateIP(ctx, owner)
			if err != nil {
				return err
			}
			*keys = append(*keys, a.ipKey(ip))
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
		default:
			addr, err := netip.ParseAddr(svc.Spec.ClusterIP)
			if err != nil || !a.CIDR.Contains(addr) {
				return apierrors.NewInvalid(gk, svc.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), svc.Spec.ClusterIP,
					fmt.Sprintf("failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", svc.Spec.ClusterIP, svc.Spec.ClusterIP, a.CIDR))})
			}
			ok, err := a.reserve(ctx, a.ipKey(svc.Spec.ClusterIP), owner)
			if err != nil {
				return err
			}
			if !ok {
				return apierrors.NewInvalid(gk, svc.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), svc.Spec.ClusterIP,
					fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", svc.Spec.ClusterIP))})
			}
			*keys = append(*keys, a.ipKey(svc.Spec.ClusterIP))
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
		if svc.Spec.ClusterIP != corev1.ClusterIPNone || len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		if svc.Spec.IPFamilyPolicy == nil {
			single := corev1.IPFamilyPolicySingleStack
			svc.Spec.IPFamilyPolicy = &single
		}
	}
	if needsNodePorts(svc.Spec.Type) {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 {
				port, err := a.allocatePort(ctx, owner)
				if err != nil {
					return err
				}
				*keys = append(*keys, a.portKey(port))
				p.NodePort = port
				continue
			}
			if old != nil && hasNodePort(old, p.NodePort) {
				continue
			}
			if int(p.NodePort) < a.NodePort.Base || int(p.NodePort) >= a.NodePort.Base+a.NodePort.Size {
				return apierrors.NewInvalid(gk, svc.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort,
					fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", a.NodePort.Base, a.NodePort.Base+a.NodePort.Size-1))})
			}
			ok, err := a.reserve(ctx, a.portKey(p.NodePort), owner)
			if err != nil {
				return err
			}
			if !ok {
				return apierrors.NewInvalid(gk, svc.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, "provided port is already allocated")})
			}
			*keys = append(*keys, a.portKey(p.NodePort))
		}
	}
	return nil
}

func hasNodePort(svc *corev1.Service, port int32) bool {
	for _, p := range svc.Spec.Ports {
		if p.NodePort == port {
			return true
		}
	}
	return false
}

// AfterDelete releases what the Service held.
func (a *ServiceAllocator) AfterDelete(ctx context.Context, obj runtime.Object) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != corev1.ClusterIPNone {
			a.release(ctx, a.ipKey(ip), svcOwner(svc))
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			a.release(ctx, a.portKey(p.NodePort), svcOwner(svc))
		}
	}
}

// ReserveKubernetesIP takes the first address for the kubernetes Service.
func (a *ServiceAllocator) FirstIP() string { return a.nth(0) }
