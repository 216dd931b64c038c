package service

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateService, validation.ValidateServiceUpdate)

// clusterIPFamily is the one family Services get addresses of:
// --service-cluster-ip-range takes a single IPv4 CIDR, so skiff clusters
// are IPv4 single-stack.
const clusterIPFamily = corev1.IPv4Protocol

// serviceStrategy is upstream's Service strategy on top of the generic one:
// clusterIP and clusterIPs kept in step, the fields of a type dropped when
// the type changes, allocated values kept by updates that leave them out,
// and the IP family fields defaulted and checked against the cluster's
// family (upstream's NormalizeClusterIPs, dropTypeDependentFields,
// patchAllocatedValues and initIPFamilyFields). The allocation itself is
// the ServiceAllocator's, a hook of the store.
type serviceStrategy struct{ rest.Generic }

var _ rest.Strategy = serviceStrategy{}

// Strategy is the Service's main endpoint; StatusStrategy its status.
var (
	Strategy       = serviceStrategy{rest.Main(validated)}
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a Service.
var Default = rest.Defaults(defaults.DefaultService)

func (s serviceStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.Generic.PrepareForCreate(ctx, obj)
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	normalizeClusterIPs(svc, nil)
	initIPFamilyFields(svc, nil)
}

func (s serviceStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Generic.PrepareForUpdate(ctx, obj, old)
	svc, ok1 := obj.(*corev1.Service)
	oldSvc, ok2 := old.(*corev1.Service)
	if !ok1 || !ok2 {
		return
	}
	normalizeClusterIPs(svc, oldSvc)
	dropTypeDependentFields(svc, oldSvc)
	patchAllocatedValues(svc, oldSvc)
	initIPFamilyFields(svc, oldSvc)
}

func (s serviceStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	errs := s.Generic.Validate(ctx, obj)
	if svc, ok := obj.(*corev1.Service); ok {
		errs = append(errs, clusterFamilyErrors(svc)...)
	}
	return errs
}

func (s serviceStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.Generic.ValidateUpdate(ctx, obj, old)
	if svc, ok := obj.(*corev1.Service); ok {
		errs = append(errs, clusterFamilyErrors(svc)...)
	}
	return errs
}

func needsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

func needsHCNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// shouldAllocateNodePorts: a LoadBalancer Service with
// allocateLoadBalancerNodePorts false gets no new node ports (the ones it
// asks for are still reserved).
func shouldAllocateNodePorts(svc *corev1.Service) bool {
	if svc.Spec.Type == corev1.ServiceTypeNodePort {
		return true
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func isHeadless(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == corev1.ClusterIPNone || (len(svc.Spec.ClusterIPs) > 0 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone)
}

// normalizeClusterIPs divines clusterIPs from clusterIP for clients that
// only know the singular field.
func normalizeClusterIPs(svc, old *corev1.Service) {
	if old == nil {
		if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
		return
	}
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == svc.Spec.ClusterIP {
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP != svc.Spec.ClusterIP {
		same := slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs)
		if old.Spec.ClusterIP != "" && svc.Spec.ClusterIP == "" && same {
			svc.Spec.ClusterIPs = nil
		} else if same {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
	}
}

// dropTypeDependentFields wipes what the old type had and the new one does
// not, when the client left it as it was.
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if svc.Spec.ClusterIP == old.Spec.ClusterIP && slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(svc.Spec.IPFamilies, old.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if equality.Semantic.DeepEqual(svc.Spec.IPFamilyPolicy, old.Spec.IPFamilyPolicy) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePorts(old.Spec.Type) && !needsNodePorts(svc.Spec.Type) && slices.Equal(nodePortsOf(svc), nodePortsOf(old)) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHCNodePort(old) && !needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		if a, b := svc.Spec.AllocateLoadBalancerNodePorts, old.Spec.AllocateLoadBalancerNodePorts; a != nil && b != nil && *a == *b {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if equality.Semantic.DeepEqual(svc.Spec.LoadBalancerClass, old.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
		// The load balancer's status belongs to the type.
		svc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
	if externallyAccessible(old) && !externallyAccessible(svc) && svc.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
}

func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer || svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

func nodePortsOf(svc *corev1.Service) []int32 {
	out := make([]int32, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		out = append(out, p.NodePort)
	}
	return out
}

// patchAllocatedValues keeps the cluster IPs, node ports (matched by port
// name) and health check node port an update leaves out, so that a PUT of
// a Service without them is idempotent.
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePorts(old.Spec.Type) && needsNodePorts(svc.Spec.Type) {
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 {
				if v := byName[p.Name]; !slices.Contains(nodePortsOf(svc), v) {
					p.NodePort = v
				}
			}
		}
	}
	if needsHCNodePort(old) && needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

func familyOf(ip string) corev1.IPFamily {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	if a.Is4() || a.Is4In6() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// initIPFamilyFields defaults ipFamilyPolicy and ipFamilies as upstream's
// allocator does on a single-stack cluster; what cannot be served is
// reported by clusterFamilyErrors.
func initIPFamilyFields(svc, old *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	// A PreferDualStack Service is neither upgraded nor downgraded by a
	// change of the cluster's stacks alone.
	if old != nil && old.Spec.Type != corev1.ServiceTypeExternalName &&
		old.Spec.IPFamilyPolicy != nil && *old.Spec.IPFamilyPolicy == corev1.IPFamilyPolicyPreferDualStack &&
		svc.Spec.IPFamilyPolicy != nil && *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicyPreferDualStack &&
		slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) && slices.Equal(svc.Spec.IPFamilies, old.Spec.IPFamilies) {
		return
	}
	selectorless := len(svc.Spec.Selector) == 0
	if svc.Spec.IPFamilyPolicy == nil {
		var p corev1.IPFamilyPolicy
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			p = *old.Spec.IPFamilyPolicy
		case svc.Spec.ClusterIP == corev1.ClusterIPNone && selectorless:
			// Headless and selectorless: any family the endpoints have.
			p = corev1.IPFamilyPolicyRequireDualStack
		default:
			p = corev1.IPFamilyPolicySingleStack
		}
		svc.Spec.IPFamilyPolicy = &p
	}
	single := *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
	if old != nil && single {
		if slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) && len(svc.Spec.ClusterIPs) > 1 {
			svc.Spec.ClusterIPs = svc.Spec.ClusterIPs[:1]
		}
		if slices.Equal(svc.Spec.IPFamilies, old.Spec.IPFamilies) && len(svc.Spec.IPFamilies) > 1 {
			svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
		}
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if fam := familyOf(ip); i >= len(svc.Spec.IPFamilies) && fam == clusterIPFamily {
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, fam)
		}
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone && selectorless {
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{clusterIPFamily}
		}
		if len(svc.Spec.IPFamilies) == 1 && !single {
			other := corev1.IPv6Protocol
			if svc.Spec.IPFamilies[0] == corev1.IPv6Protocol {
				other = corev1.IPv4Protocol
			}
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, other)
		}
		return
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{clusterIPFamily}
	}
}

// clusterFamilyErrors refuses what a single-stack cluster cannot give, with
// upstream's messages.
func clusterFamilyErrors(svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	for i, ip := range svc.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if fam := familyOf(ip); i >= len(svc.Spec.IPFamilies) && fam != "" && fam != clusterIPFamily {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), svc.Spec.ClusterIPs,
				fmt.Sprintf("%s is not configured on this cluster", fam)))
		}
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0 {
		// Headless and selectorless Services may name both families.
		return errs
	}
	if p := svc.Spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), p, "this cluster is not configured for dual-stack services"))
	}
	for i, fam := range svc.Spec.IPFamilies {
		if fam != clusterIPFamily && (fam == corev1.IPv4Protocol || fam == corev1.IPv6Protocol) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), fam, "not configured on this cluster"))
		}
	}
	return errs
}
