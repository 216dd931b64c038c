package validation

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

var pathTypes = sets.New(networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific)

// ValidateIngress validates an Ingress on create and update.
func ValidateIngress(ing *networkingv1.Ingress) field.ErrorList {
	allErrs := validateObjectMeta(&ing.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	if len(ing.Spec.Rules) == 0 && ing.Spec.DefaultBackend == nil {
		allErrs = append(allErrs, field.Invalid(spec, ing.Spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if ing.Spec.DefaultBackend != nil {
		allErrs = append(allErrs, validateIngressBackend(ing.Spec.DefaultBackend, spec.Child("defaultBackend"))...)
	}
	if ing.Spec.IngressClassName != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*ing.Spec.IngressClassName, false) {
			allErrs = append(allErrs, field.Invalid(spec.Child("ingressClassName"), *ing.Spec.IngressClassName, msg))
		}
	}
	for i, rule := range ing.Spec.Rules {
		rp := spec.Child("rules").Index(i)
		if rule.Host != "" {
			host := rule.Host
			if strings.HasPrefix(host, "*.") {
				for _, msg := range validation.IsWildcardDNS1123Subdomain(host) {
					allErrs = append(allErrs, field.Invalid(rp.Child("host"), host, msg))
				}
			} else {
				for _, msg := range validation.IsDNS1123Subdomain(host) {
					allErrs = append(allErrs, field.Invalid(rp.Child("host"), host, msg))
				}
			}
			if netutils.ParseIPSloppy(host) != nil {
				allErrs = append(allErrs, field.Invalid(rp.Child("host"), host, "must be a DNS name, not an IP address"))
			}
		}
		if rule.HTTP == nil {
			continue
		}
		hp := rp.Child("http", "paths")
		if len(rule.HTTP.Paths) == 0 {
			allErrs = append(allErrs, field.Required(hp, ""))
		}
		for j, path := range rule.HTTP.Paths {
			pp := hp.Index(j)
			if path.PathType == nil {
				allErrs = append(allErrs, field.Required(pp.Child("pathType"), "pathType must be specified"))
			} else if !pathTypes.Has(*path.PathType) {
				allErrs = append(allErrs, field.NotSupported(pp.Child("pathType"), *path.PathType, sets.List(pathTypes)))
			} else if *path.PathType != networkingv1.PathTypeImplementationSpecific && !strings.HasPrefix(path.Path, "/") {
				allErrs = append(allErrs, field.Invalid(pp.Child("path"), path.Path, "must be an absolute path"))
			}
			allErrs = append(allErrs, validateIngressBackend(&path.Backend, pp.Child("backend"))...)
		}
	}
	for i, tls := range ing.Spec.TLS {
		for j, host := range tls.Hosts {
			if strings.HasPrefix(host, "*.") {
				for _, msg := range validation.IsWildcardDNS1123Subdomain(host) {
					allErrs = append(allErrs, field.Invalid(spec.Child("tls").Index(i).Child("hosts").Index(j), host, msg))
				}
				continue
			}
			for _, msg := range validation.IsDNS1123Subdomain(host) {
				allErrs = append(allErrs, field.Invalid(spec.Child("tls").Index(i).Child("hosts").Index(j), host, msg))
			}
		}
	}
	return allErrs
}

func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case b.Service != nil && b.Resource != nil:
		allErrs = append(allErrs, field.Invalid(p, b.Resource, "cannot set both resource and service backends"))
	case b.Service != nil:
		sp := p.Child("service")
		if b.Service.Name == "" {
			allErrs = append(allErrs, field.Required(sp.Child("name"), ""))
		} else {
			for _, msg := range apimachineryvalidation.NameIsDNS1035Label(b.Service.Name, false) {
				allErrs = append(allErrs, field.Invalid(sp.Child("name"), b.Service.Name, msg))
			}
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			allErrs = append(allErrs, field.Invalid(sp.Child("port"), port, "cannot set both port name & port number"))
		case port.Name != "":
			for _, msg := range validation.IsValidPortName(port.Name) {
				allErrs = append(allErrs, field.Invalid(sp.Child("port", "name"), port.Name, msg))
			}
		case port.Number != 0:
			for _, msg := range validation.IsValidPortNum(int(port.Number)) {
				allErrs = append(allErrs, field.Invalid(sp.Child("port", "number"), port.Number, msg))
			}
		default:
			allErrs = append(allErrs, field.Required(sp.Child("port"), "port name or number is required"))
		}
	case b.Resource != nil:
		if b.Resource.Kind == "" {
			allErrs = append(allErrs, field.Required(p.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("resource", "name"), ""))
		}
	default:
		allErrs = append(allErrs, field.Invalid(p, b, "resource or service backend is required"))
	}
	return allErrs
}

// ValidateIngressClass: a domain-prefixed controller, immutable.
func ValidateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	allErrs := validateObjectMeta(&ic.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	cp := field.NewPath("spec", "controller")
	if ic.Spec.Controller == "" {
		allErrs = append(allErrs, field.Required(cp, ""))
	} else {
		if len(ic.Spec.Controller) > 250 {
			allErrs = append(allErrs, field.TooLong(cp, "", 250))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelName(ic.Spec.Controller, cp)...)
		if !strings.Contains(ic.Spec.Controller, "/") {
			allErrs = append(allErrs, field.Invalid(cp, ic.Spec.Controller, "must be a domain-prefixed path (such as \"acme.io/foo\")"))
		}
	}
	if p := ic.Spec.Parameters; p != nil {
		pp := field.NewPath("spec", "parameters")
		if p.Kind == "" {
			allErrs = append(allErrs, field.Required(pp.Child("kind"), "kind is required"))
		}
		if p.Name == "" {
			allErrs = append(allErrs, field.Required(pp.Child("name"), "name is required"))
		}
		if p.Scope != nil && *p.Scope == networkingv1.IngressClassParametersReferenceScopeNamespace && p.Namespace == nil {
			allErrs = append(allErrs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		}
	}
	return allErrs
}

// ValidateIngressClassUpdate: the controller is immutable.
func ValidateIngressClassUpdate(ic, old *networkingv1.IngressClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ic.ObjectMeta, &old.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateIngressClass(ic)...)
	return append(allErrs, validateImmutableField(ic.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))...)
}

// ValidateNetworkPolicy validates selectors, ports, ipBlocks and policy types.
func ValidateNetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	allErrs := validateObjectMeta(&np.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	spec := field.NewPath("spec")
	opts := metav1validation.LabelSelectorValidationOptions{}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(&np.Spec.PodSelector, opts, spec.Child("podSelector"))...)
	peers := func(list []networkingv1.NetworkPolicyPeer, p *field.Path) {
		for i, peer := range list {
			pp := p.Index(i)
			n := 0
			if peer.PodSelector != nil {
				n++
				allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, pp.Child("podSelector"))...)
			}
			if peer.NamespaceSelector != nil {
				n++
				allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, pp.Child("namespaceSelector"))...)
			}
			if peer.IPBlock != nil {
				if n > 0 {
					allErrs = append(allErrs, field.Forbidden(pp, "may not specify more than 1 peer type"))
				}
				n++
				if _, _, err := netutils.ParseCIDRSloppy(peer.IPBlock.CIDR); err != nil {
					allErrs = append(allErrs, field.Invalid(pp.Child("ipBlock", "cidr"), peer.IPBlock.CIDR, "must be a valid CIDR"))
				}
				for j, ex := range peer.IPBlock.Except {
					if _, _, err := netutils.ParseCIDRSloppy(ex); err != nil {
						allErrs = append(allErrs, field.Invalid(pp.Child("ipBlock", "except").Index(j), ex, "must be a valid CIDR"))
					}
				}
			}
			if n == 0 {
				allErrs = append(allErrs, field.Required(pp, "must specify a peer"))
			}
		}
	}
	ports := func(list []networkingv1.NetworkPolicyPort, p *field.Path) {
		for i, port := range list {
			pp := p.Index(i)
			if port.Protocol != nil && !supportedPortProtocols.Has(*port.Protocol) {
				allErrs = append(allErrs, field.NotSupported(pp.Child("protocol"), *port.Protocol, sets.List(supportedPortProtocols)))
			}
			if port.EndPort != nil && (port.Port == nil || port.Port.IntVal == 0 || *port.EndPort < port.Port.IntVal) {
				allErrs = append(allErrs, field.Invalid(pp.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
			}
		}
	}
	for i, rule := range np.Spec.Ingress {
		peers(rule.From, spec.Child("ingress").Index(i).Child("from"))
		ports(rule.Ports, spec.Child("ingress").Index(i).Child("ports"))
	}
	for i, rule := range np.Spec.Egress {
		peers(rule.To, spec.Child("egress").Index(i).Child("to"))
		ports(rule.Ports, spec.Child("egress").Index(i).Child("ports"))
	}
	if len(np.Spec.PolicyTypes) > 2 {
		allErrs = append(allErrs, field.Invalid(spec.Child("policyTypes"), np.Spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range np.Spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			allErrs = append(allErrs, field.NotSupported(spec.Child("policyTypes").Index(i), t,
				[]string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}))
		}
	}
	return allErrs
}

// ValidateIngressUpdate validates an update of an Ingress: the metadata
// rules and the Ingress as on create.
func ValidateIngressUpdate(o, p *networkingv1.Ingress) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateIngress(o)...)
}

// ValidateNetworkPolicyUpdate validates an update of a NetworkPolicy: the
// metadata rules and the policy as on create.
func ValidateNetworkPolicyUpdate(o, p *networkingv1.NetworkPolicy) field.ErrorList {
	return append(validateObjectMetaUpdate(&o.ObjectMeta, &p.ObjectMeta, metadataPath), ValidateNetworkPolicy(o)...)
}
