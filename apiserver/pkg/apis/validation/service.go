package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

var (
	supportedSessionAffinityType = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedServiceType         = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedServiceInternalTrafficPolicy = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	supportedServiceIPFamily              = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedServiceIPFamilyPolicy        = sets.New(corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)
	validExternalTrafficPolicies          = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
)

func isHeadlessService(svc *corev1.Service) bool {
	return svc != nil && len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// ValidateService validates a Service on create. It expects what upstream's
// strategy and allocators produce before validation: clusterIPs in step with
// clusterIP, and healthCheckNodePort allocated for LoadBalancer services with
// externalTrafficPolicy Local.
func ValidateService(svc *corev1.Service) field.ErrorList {
	allErrs := validateObjectMeta(&svc.ObjectMeta, true, apimachineryvalidation.NameIsDNS1035Label, metadataPath)

	hintsVal, hintsSet := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	modeVal, modeSet := svc.Annotations[corev1.AnnotationTopologyMode]
	if modeSet && hintsSet && modeVal != hintsVal {
		allErrs = append(allErrs, field.Invalid(metadataPath.Child("annotations").Key(corev1.AnnotationTopologyMode), modeVal,
			fmt.Sprintf("must match annotations[%s] when both are specified", corev1.DeprecatedAnnotationTopologyAwareHints)))
	}

	specPath := field.NewPath("spec")
	spec := &svc.Spec
	if len(spec.Ports) == 0 && !isHeadlessService(svc) && spec.Type != corev1.ServiceTypeExternalName {
		allErrs = append(allErrs, field.Required(specPath.Child("ports"), ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		if isHeadlessService(svc) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for LoadBalancer services"))
		}
	case corev1.ServiceTypeNodePort:
		if isHeadlessService(svc) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for NodePort services"))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// The CNAME may have a trailing dot to mark it fully qualified.
		if cname := strings.TrimSuffix(spec.ExternalName, "."); len(cname) > 0 {
			allErrs = append(allErrs, validateDNS1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			allErrs = append(allErrs, field.Required(specPath.Child("externalName"), ""))
		}
	}

	allPortNames := sets.New[string]()
	portsPath := specPath.Child("ports")
	for i := range spec.Ports {
		allErrs = append(allErrs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, allPortNames, portsPath.Index(i))...)
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	if len(spec.SessionAffinity) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("sessionAffinity"), ""))
	} else if !supportedSessionAffinityType.Has(spec.SessionAffinity) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("sessionAffinity"), spec.SessionAffinity, sets.List(supportedSessionAffinityType)))
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		allErrs = append(allErrs, validateClientIPAffinityConfig(spec.SessionAffinityConfig, specPath.Child("sessionAffinityConfig"))...)
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}

	allErrs = append(allErrs, validateServiceClusterIPsRelatedFields(svc)...)

	ipPath := specPath.Child("externalIPs")
	for i, ip := range spec.ExternalIPs {
		idxPath := ipPath.Index(i)
		if errs := validation.IsValidIP(idxPath, ip); len(errs) != 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, validateNonSpecialIP(ip, idxPath)...)
		}
	}

	if len(spec.Type) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("type"), ""))
	} else if !supportedServiceType.Has(spec.Type) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("type"), spec.Type, sets.List(supportedServiceType)))
	}
	if spec.Type == corev1.ServiceTypeClusterIP {
		for i := range spec.Ports {
			if spec.Ports[i].NodePort != 0 {
				allErrs = append(allErrs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}

	// Node ports and ports must be unique per protocol.
	type protoPort struct {
		protocol corev1.Protocol
		port     int32
	}
	nodePorts := map[protoPort]bool{}
	for i, p := range spec.Ports {
		if p.NodePort == 0 {
			continue
		}
		key := protoPort{p.Protocol, p.NodePort}
		if nodePorts[key] {
			allErrs = append(allErrs, field.Duplicate(portsPath.Index(i).Child("nodePort"), p.NodePort))
		}
		nodePorts[key] = true
	}
	ports := map[protoPort]bool{}
	for i, p := range spec.Ports {
		key := protoPort{p.Protocol, p.Port}
		if ports[key] {
			allErrs = append(allErrs, field.Duplicate(portsPath.Index(i), corev1.ServicePort{Protocol: p.Protocol, Port: p.Port}))
		}
		ports[key] = true
	}

	if len(spec.LoadBalancerSourceRanges) > 0 {
		// Upstream's path is capitalised.
		rangesPath := specPath.Child("LoadBalancerSourceRanges")
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(rangesPath, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, value := range spec.LoadBalancerSourceRanges {
			allErrs = append(allErrs, validation.IsValidCIDR(rangesPath.Index(i), strings.TrimSpace(value))...)
		}
	} else if val, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		annPath := metadataPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(annPath, "may only be used when `type` is 'LoadBalancer'"))
		}
		if val = strings.TrimSpace(val); val != "" {
			for _, value := range strings.Split(val, ",") {
				allErrs = append(allErrs, validation.IsValidCIDR(annPath, strings.TrimSpace(value))...)
			}
		}
	}

	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		// Upstream reports this without the "spec." prefix.
		allErrs = append(allErrs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	allErrs = append(allErrs, validateLoadBalancerClassField(nil, svc)...)
	allErrs = append(allErrs, validateServiceExternalTrafficPolicy(svc)...)
	allErrs = append(allErrs, validateServiceInternalTrafficFieldsValue(svc)...)
	if spec.TrafficDistribution != nil && *spec.TrafficDistribution != corev1.ServiceTrafficDistributionPreferClose {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("trafficDistribution"), *spec.TrafficDistribution, []string{corev1.ServiceTrafficDistributionPreferClose}))
	}
	return allErrs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, allNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && len(sp.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if len(sp.Name) != 0 {
		allErrs = append(allErrs, validateDNS1123Label(sp.Name, fldPath.Child("name"))...)
		if allNames.Has(sp.Name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("name"), sp.Name))
		} else {
			allNames.Insert(sp.Name)
		}
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), sp.Port, msg))
	}
	if len(sp.Protocol) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(sp.Protocol) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), sp.Protocol, sets.List(supportedPortProtocols)))
	}
	allErrs = append(allErrs, validatePortNumOrName(sp.TargetPort, fldPath.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*sp.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}

func validateClientIPAffinityConfig(config *corev1.SessionAffinityConfig, fldPath *field.Path) field.ErrorList {
	detail := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	if config == nil {
		return field.ErrorList{field.Required(fldPath, detail)}
	}
	if config.ClientIP == nil {
		return field.ErrorList{field.Required(fldPath.Child("clientIP"), detail)}
	}
	timeoutPath := fldPath.Child("clientIP").Child("timeoutSeconds")
	if config.ClientIP.TimeoutSeconds == nil {
		return field.ErrorList{field.Required(timeoutPath, detail)}
	}
	if t := *config.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(timeoutPath, config.ClientIP.TimeoutSeconds, fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds))}
	}
	return nil
}

func validateServiceExternalTrafficPolicy(svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	if !externallyAccessible(svc) {
		if svc.Spec.ExternalTrafficPolicy != "" {
			allErrs = append(allErrs, field.Invalid(specPath.Child("externalTrafficPolicy"), svc.Spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if svc.Spec.ExternalTrafficPolicy == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("externalTrafficPolicy"), ""))
	} else if !validExternalTrafficPolicies.Has(svc.Spec.ExternalTrafficPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("externalTrafficPolicy"), svc.Spec.ExternalTrafficPolicy, sets.List(validExternalTrafficPolicies)))
	}
	if !needsHealthCheck(svc) {
		if svc.Spec.HealthCheckNodePort != 0 {
			allErrs = append(allErrs, field.Invalid(specPath.Child("healthCheckNodePort"), svc.Spec.HealthCheckNodePort,
				"may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if svc.Spec.HealthCheckNodePort == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("healthCheckNodePort"), ""))
	} else {
		for _, msg := range validation.IsValidPortNum(int(svc.Spec.HealthCheckNodePort)) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("healthCheckNodePort"), svc.Spec.HealthCheckNodePort, msg))
		}
	}
	return allErrs
}

func validateServiceInternalTrafficFieldsValue(svc *corev1.Service) field.ErrorList {
	p := field.NewPath("spec").Child("internalTrafficPolicy")
	if svc.Spec.InternalTrafficPolicy == nil {
		switch svc.Spec.Type {
		case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP:
			return field.ErrorList{field.Required(p, "")}
		}
		return nil
	}
	if !supportedServiceInternalTrafficPolicy.Has(*svc.Spec.InternalTrafficPolicy) {
		return field.ErrorList{field.NotSupported(p, *svc.Spec.InternalTrafficPolicy, sets.List(supportedServiceInternalTrafficPolicy))}
	}
	return nil
}

func validateLoadBalancerClassField(oldSvc, svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	classPath := field.NewPath("spec", "loadBalancerClass")
	isLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if oldSvc != nil && oldSvc.Spec.Type == corev1.ServiceTypeLoadBalancer && isLB {
		oldClass, newClass := oldSvc.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass
		same := (oldClass == nil && newClass == nil) || (oldClass != nil && newClass != nil && *oldClass == *newClass)
		if !same {
			allErrs = append(allErrs, field.Invalid(classPath, svc.Spec.LoadBalancerClass, "may not change once set"))
		}
	}
	if isLB {
		if svc.Spec.LoadBalancerClass != nil {
			allErrs = append(allErrs, validateQualifiedName(*svc.Spec.LoadBalancerClass, classPath)...)
		}
	} else if svc.Spec.LoadBalancerClass != nil {
		allErrs = append(allErrs, field.Forbidden(classPath, "may only be used when `type` is 'LoadBalancer'"))
	}
	return allErrs
}

// validateServiceClusterIPsRelatedFields checks clusterIP, clusterIPs,
// ipFamilies and ipFamilyPolicy against each other.
func validateServiceClusterIPsRelatedFields(svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var allErrs field.ErrorList
	spec := &svc.Spec
	specPath := field.NewPath("spec")
	clusterIPsPath := specPath.Child("clusterIPs")
	ipFamiliesPath := specPath.Child("ipFamilies")

	if len(spec.ClusterIP) != 0 {
		if len(spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Required(clusterIPsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}

	seen := sets.New[corev1.IPFamily]()
	for i, family := range spec.IPFamilies {
		if !supportedServiceIPFamily.Has(family) {
			allErrs = append(allErrs, field.NotSupported(ipFamiliesPath.Index(i), family, sets.List(supportedServiceIPFamily)))
		}
		if seen.Has(family) {
			allErrs = append(allErrs, field.Duplicate(ipFamiliesPath.Index(i), family))
		}
		seen.Insert(family)
	}
	if spec.IPFamilyPolicy != nil && !supportedServiceIPFamilyPolicy.Has(*spec.IPFamilyPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("ipFamilyPolicy"), *spec.IPFamilyPolicy, sets.List(supportedServiceIPFamilyPolicy)))
	}

	hasInvalidIPs := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				hasInvalidIPs = true
				allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		errs := validation.IsValidIP(clusterIPsPath.Index(i), ip)
		hasInvalidIPs = hasInvalidIPs || len(errs) != 0
		allErrs = append(allErrs, errs...)
	}
	if len(spec.ClusterIPs) > 2 {
		allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if hasInvalidIPs {
		return allErrs
	}
	if len(spec.ClusterIPs) > 1 {
		dualStack, err := netutils.IsDualStackIPStrings(spec.ClusterIPs)
		if err != nil {
			allErrs = append(allErrs, field.InternalError(clusterIPsPath, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		}
		if !dualStack {
			allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if !isHeadlessService(svc) && len(spec.ClusterIPs) > 0 && len(spec.IPFamilies) > 0 {
		for i, ip := range spec.ClusterIPs {
			if i > len(spec.IPFamilies)-1 {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && netutils.IsIPv6String(ip) {
				allErrs = append(allErrs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !netutils.IsIPv6String(ip) {
				allErrs = append(allErrs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return allErrs
}

// ValidateServiceUpdate validates an update of a Service: the cluster IPs
// and IP families may only be upgraded (a secondary added) or downgraded
// (the secondary released with ipFamilyPolicy SingleStack), the
// loadBalancerClass of a LoadBalancer and an allocated healthCheckNodePort
// are immutable, and the new Service must be valid.
func ValidateServiceUpdate(svc, oldSvc *corev1.Service) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&svc.ObjectMeta, &oldSvc.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateUpgradeDowngradeClusterIPs(oldSvc, svc)...)
	allErrs = append(allErrs, validateUpgradeDowngradeIPFamilies(oldSvc, svc)...)
	allErrs = append(allErrs, validateLoadBalancerClassField(oldSvc, svc)...)
	if needsHealthCheck(oldSvc) && needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort != oldSvc.Spec.HealthCheckNodePort {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), "field is immutable"))
	}
	return append(allErrs, ValidateService(svc)...)
}

func validateUpgradeDowngradeClusterIPs(oldSvc, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || oldSvc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(oldSvc) && isHeadlessService(svc) {
		return nil
	}
	var allErrs field.ErrorList
	ipsPath := field.NewPath("spec", "clusterIPs")
	oldIPs, newIPs := oldSvc.Spec.ClusterIPs, svc.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(newIPs):
		for i, ip := range oldIPs {
			if ip != newIPs[i] {
				allErrs = append(allErrs, field.Invalid(ipsPath.Index(i), newIPs, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(ipsPath.Index(0), newIPs, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(newIPs) > 0 && newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(ipsPath.Index(0), newIPs, "may not change once set"))
		}
		if len(newIPs) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(ipsPath.Index(0), newIPs, "may not change once set"))
		}
	}
	return allErrs
}

func validateUpgradeDowngradeIPFamilies(oldSvc, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || oldSvc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	oldHeadless, newHeadless := isHeadlessService(oldSvc), isHeadlessService(svc)
	if oldHeadless != newHeadless || newHeadless {
		return nil
	}
	var allErrs field.ErrorList
	familiesPath := field.NewPath("spec", "ipFamilies")
	oldFamilies, newFamilies := oldSvc.Spec.IPFamilies, svc.Spec.IPFamilies
	switch {
	case len(oldFamilies) == len(newFamilies):
		for i, f := range oldFamilies {
			if f != newFamilies[i] {
				allErrs = append(allErrs, field.Invalid(familiesPath.Index(0), newFamilies, "may not change once set"))
			}
		}
	case len(oldFamilies) > len(newFamilies):
		if len(svc.Spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(familiesPath.Index(0), newFamilies, "primary ipFamily can not be unset"))
		}
		if len(newFamilies) > 0 && newFamilies[0] != oldFamilies[0] {
			allErrs = append(allErrs, field.Invalid(familiesPath.Index(0), svc.Spec.ClusterIPs, "may not change once set"))
		}
		if len(newFamilies) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldFamilies) > 0 && len(newFamilies) > 0 && newFamilies[0] != oldFamilies[0] {
			allErrs = append(allErrs, field.Invalid(familiesPath.Index(0), svc.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return allErrs
}

// ValidateEndpoints validates Endpoints, on create and on update.
func ValidateEndpoints(ep *corev1.Endpoints) field.ErrorList {
	allErrs := validateObjectMeta(&ep.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	subsetsPath := field.NewPath("subsets")
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		idxPath := subsetsPath.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			allErrs = append(allErrs, field.Required(idxPath, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.Addresses[j], idxPath.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.NotReadyAddresses[j], idxPath.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			allErrs = append(allErrs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, idxPath.Child("ports").Index(j))...)
		}
	}
	return allErrs
}

// ValidateEndpointsUpdate validates an update of Endpoints.
func ValidateEndpointsUpdate(ep, oldEp *corev1.Endpoints) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ep.ObjectMeta, &oldEp.ObjectMeta, metadataPath)
	return append(allErrs, ValidateEndpoints(ep)...)
}

func validateEndpointAddress(addr *corev1.EndpointAddress, fldPath *field.Path) field.ErrorList {
	allErrs := validation.IsValidIP(fldPath.Child("ip"), addr.IP)
	if len(addr.Hostname) > 0 {
		allErrs = append(allErrs, validateDNS1123Label(addr.Hostname, fldPath.Child("hostname"))...)
	}
	if addr.NodeName != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*addr.NodeName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), *addr.NodeName, msg))
		}
	}
	allErrs = append(allErrs, validateNonSpecialIP(addr.IP, fldPath.Child("ip"))...)
	return allErrs
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && len(port.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if len(port.Name) != 0 {
		allErrs = append(allErrs, validateDNS1123Label(port.Name, fldPath.Child("name"))...)
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port.Port, msg))
	}
	if len(port.Protocol) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(port.Protocol) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
	}
	if port.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*port.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}
