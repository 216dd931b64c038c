package validation

import (
	"fmt"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var validLeaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

// ValidateLease validates a Lease on create.
func ValidateLease(lease *coordinationv1.Lease) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&lease.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validateLeaseSpec(&lease.Spec, field.NewPath("spec"))...)
}

// ValidateLeaseUpdate validates an update of a Lease.
func ValidateLeaseUpdate(lease, oldLease *coordinationv1.Lease) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&lease.ObjectMeta, &oldLease.ObjectMeta, metadataPath)
	return append(allErrs, validateLeaseSpec(&lease.Spec, field.NewPath("spec"))...)
}

func validateLeaseSpec(spec *coordinationv1.LeaseSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.LeaseDurationSeconds != nil && *spec.LeaseDurationSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseDurationSeconds"), spec.LeaseDurationSeconds, "must be greater than 0"))
	}
	if spec.LeaseTransitions != nil && *spec.LeaseTransitions < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseTransitions"), spec.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		allErrs = append(allErrs, validateCoordinatedLeaseStrategy(*spec.Strategy, fldPath.Child("strategy"))...)
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return allErrs
}

// validateCoordinatedLeaseStrategy accepts the Kubernetes-defined strategies
// and any qualified name with a prefix. Upstream appends "strategy" to the
// path a second time; so does this.
func validateCoordinatedLeaseStrategy(strategy coordinationv1.CoordinatedLeaseStrategy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if parts := strings.Split(string(strategy), "/"); len(parts) == 1 {
		known := false
		for _, s := range validLeaseStrategies {
			if s == strategy {
				known = true
			}
		}
		if !known {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("strategy"), strategy, validLeaseStrategies))
		}
	} else {
		for _, msg := range validation.IsQualifiedName(string(strategy)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("strategy"), strategy, msg))
		}
	}
	return allErrs
}

// EndpointSlices.

var (
	supportedAddressTypes = sets.New(string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6), string(discoveryv1.AddressTypeFQDN))
	maxTopologyLabels     = 16
	maxAddresses          = 100
	maxSlicePorts         = 20000
	maxEndpoints          = 1000
	maxZoneHints          = 8
)

// ValidateEndpointSlice validates an EndpointSlice on create.
func ValidateEndpointSlice(es *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := validateObjectMeta(&es.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	addrPath := field.NewPath("addressType")
	if es.AddressType == "" {
		allErrs = append(allErrs, field.Required(addrPath, ""))
	} else if !supportedAddressTypes.Has(string(es.AddressType)) {
		allErrs = append(allErrs, field.NotSupported(addrPath, es.AddressType, sets.List(supportedAddressTypes)))
	}
	allErrs = append(allErrs, validateSliceEndpoints(es.Endpoints, es.AddressType, field.NewPath("endpoints"))...)
	allErrs = append(allErrs, validateSlicePorts(es.Ports, field.NewPath("ports"))...)
	return allErrs
}

// ValidateEndpointSliceUpdate validates an update of an EndpointSlice; the
// address type is immutable.
func ValidateEndpointSliceUpdate(es, oldES *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&es.ObjectMeta, &oldES.ObjectMeta, metadataPath)
	allErrs = append(allErrs, ValidateEndpointSlice(es)...)
	allErrs = append(allErrs, validateImmutableField(es.AddressType, oldES.AddressType, field.NewPath("addressType"))...)
	return allErrs
}

func validateSliceEndpoints(endpoints []discoveryv1.Endpoint, addrType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(endpoints), maxEndpoints)}
	}
	var allErrs field.ErrorList
	for i, ep := range endpoints {
		idxPath := fldPath.Index(i)
		addressPath := idxPath.Child("addresses")
		if len(ep.Addresses) == 0 {
			allErrs = append(allErrs, field.Required(addressPath, "must contain at least 1 address"))
		} else if len(ep.Addresses) > maxAddresses {
			allErrs = append(allErrs, field.TooMany(addressPath, len(ep.Addresses), maxAddresses))
		}
		for j, address := range ep.Addresses {
			// Unknown address types are reported above and not checked here.
			switch addrType {
			case discoveryv1.AddressTypeIPv4:
				allErrs = append(allErrs, validation.IsValidIPv4Address(addressPath.Index(j), address)...)
				allErrs = append(allErrs, validateNonSpecialIP(address, addressPath.Index(j))...)
			case discoveryv1.AddressTypeIPv6:
				allErrs = append(allErrs, validation.IsValidIPv6Address(addressPath.Index(j), address)...)
				allErrs = append(allErrs, validateNonSpecialIP(address, addressPath.Index(j))...)
			case discoveryv1.AddressTypeFQDN:
				allErrs = append(allErrs, validation.IsFullyQualifiedDomainName(addressPath.Index(j), address)...)
			}
		}
		if ep.NodeName != nil {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*ep.NodeName, false) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("nodeName"), *ep.NodeName, msg))
			}
		}
		topologyPath := idxPath.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			allErrs = append(allErrs, field.TooMany(topologyPath, len(ep.DeprecatedTopology), maxTopologyLabels))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topologyPath)...)
		if _, found := ep.DeprecatedTopology[corev1.LabelTopologyZone]; found {
			allErrs = append(allErrs, field.InternalError(topologyPath.Key(corev1.LabelTopologyZone), fmt.Errorf("reserved key was not removed in conversion")))
		}
		if ep.Hostname != nil {
			allErrs = append(allErrs, validateDNS1123Label(*ep.Hostname, idxPath.Child("hostname"))...)
		}
		if ep.Hints != nil {
			allErrs = append(allErrs, validateEndpointHints(ep.Hints, idxPath.Child("hints"))...)
		}
	}
	return allErrs
}

func validateEndpointHints(hints *discoveryv1.EndpointHints, fldPath *field.Path) field.ErrorList {
	fzPath := fldPath.Child("forZones")
	if len(hints.ForZones) > maxZoneHints {
		return field.ErrorList{field.TooMany(fzPath, len(hints.ForZones), maxZoneHints)}
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, z := range hints.ForZones {
		zonePath := fzPath.Index(i).Child("name")
		if names.Has(z.Name) {
			allErrs = append(allErrs, field.Duplicate(zonePath, z.Name))
		} else {
			names.Insert(z.Name)
		}
		for _, msg := range validation.IsValidLabelValue(z.Name) {
			allErrs = append(allErrs, field.Invalid(zonePath, z.Name, msg))
		}
	}
	return allErrs
}

func validateSlicePorts(ports []discoveryv1.EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > maxSlicePorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), maxSlicePorts)}
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		idxPath := fldPath.Index(i)
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if len(name) > 0 {
			allErrs = append(allErrs, validateDNS1123Label(name, idxPath.Child("name"))...)
		}
		if names.Has(name) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), name))
		} else {
			names.Insert(name)
		}
		if p.Protocol == nil {
			allErrs = append(allErrs, field.Required(idxPath.Child("protocol"), ""))
		} else if !supportedPortProtocols.Has(*p.Protocol) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), *p.Protocol, sets.List(supportedPortProtocols)))
		}
		if p.AppProtocol != nil {
			allErrs = append(allErrs, validateQualifiedName(*p.AppProtocol, idxPath.Child("appProtocol"))...)
		}
	}
	return allErrs
}
