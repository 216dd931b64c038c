package validation

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

const (
	isNegativeErrorMsg     = apimachineryvalidation.IsNegativeErrorMsg
	fieldImmutableErrorMsg = apimachineryvalidation.FieldImmutableErrorMsg
	isNotIntegerErrorMsg   = `must be an integer`
	isNotPositiveErrorMsg  = `must be greater than zero`
	fileModeErrorMsg       = "must be a number between 0 and 0777 (octal), both inclusive"

	// maxClientIPServiceAffinitySeconds is the upper bound of a Service's
	// sessionAffinityConfig.clientIP.timeoutSeconds (one day).
	maxClientIPServiceAffinitySeconds = 86400
)

var pdPartitionErrorMsg = validation.InclusiveRangeError(1, 255)

func validateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateDNS1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateNonnegativeField(value int64, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(value, fldPath)
}

func validateImmutableField(newVal, oldVal interface{}, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(newVal, oldVal, fldPath)
}

func validateNonnegativeQuantity(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) < 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNegativeErrorMsg)}
	}
	return nil
}

// validatePathNoBacksteps makes sure the path has no ".." element.
func validatePathNoBacksteps(targetPath string, fldPath *field.Path) field.ErrorList {
	for item := range strings.SplitSeq(filepath.ToSlash(targetPath), "/") {
		if item == ".." {
			return field.ErrorList{field.Invalid(fldPath, targetPath, "must not contain '..'")}
		}
	}
	return nil
}

// validateLocalDescendingPath makes sure the path is relative and has no "..".
func validateLocalDescendingPath(targetPath string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(targetPath) {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must be a relative path"))
	}
	allErrs = append(allErrs, validatePathNoBacksteps(targetPath, fldPath)...)
	return allErrs
}

// validateLocalNonReservedPath additionally rejects a leading "..".
func validateLocalNonReservedPath(targetPath string, fldPath *field.Path) field.ErrorList {
	allErrs := validateLocalDescendingPath(targetPath, fldPath)
	if strings.HasPrefix(targetPath, "..") && !strings.HasPrefix(targetPath, "../") {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must not start with '..'"))
	}
	return allErrs
}

// validateNonSpecialIP rejects IPs that make no sense as endpoints or
// external IPs: unspecified, loopback and link-local addresses. Upstream calls
// it ValidateEndpointIP.
func validateNonSpecialIP(ipAddress string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	ip := netutils.ParseIPSloppy(ipAddress)
	if ip == nil {
		return field.ErrorList{field.Invalid(fldPath, ipAddress, "must be a valid IP address")}
	}
	if ip.IsUnspecified() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, fmt.Sprintf("may not be unspecified (%v)", ipAddress)))
	}
	if ip.IsLoopback() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return allErrs
}

// Resource name helpers, as in upstream's pkg/apis/core/helper.

func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func isQuotaHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// isNativeResource reports whether the name is in the kubernetes.io/
// namespace; unprefixed names are implicitly there.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") ||
		strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePageResourceName(name)
}

var standardContainerResources = sets.New[corev1.ResourceName](
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

func isStandardContainerResourceName(name corev1.ResourceName) bool {
	return standardContainerResources.Has(name) || isHugePageResourceName(name)
}

var standardResources = sets.New[corev1.ResourceName](
	corev1.ResourceCPU,
	corev1.ResourceMemory,
	corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory,
	corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU,
	corev1.ResourceLimitsMemory,
	corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods,
	corev1.ResourceQuotas,
	corev1.ResourceServices,
	corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets,
	corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceStorage,
	corev1.ResourceRequestsStorage,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
)

func isStandardResourceName(name corev1.ResourceName) bool {
	return standardResources.Has(name) || isQuotaHugePageResourceName(name)
}

var integerResources = sets.New[corev1.ResourceName](
	corev1.ResourcePods,
	corev1.ResourceQuotas,
	corev1.ResourceServices,
	corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets,
	corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
)

func isIntegerResourceName(name corev1.ResourceName) bool {
	return integerResources.Has(name) || isExtendedResourceName(name)
}

// isHugePageResourceValueDivisible reports whether the quantity is a whole
// number of pages of the size the resource name carries.
func isHugePageResourceValueDivisible(name corev1.ResourceName, quantity resource.Quantity) bool {
	pageSize, err := resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
	if err != nil || pageSize.Sign() <= 0 || pageSize.Value() <= 0 {
		return false
	}
	return quantity.Value()%pageSize.Value() == 0
}

var standardFinalizers = sets.New(
	string(corev1.FinalizerKubernetes),
	metav1.FinalizerOrphanDependents,
	metav1.FinalizerDeleteDependents,
)

func isStandardFinalizerName(name string) bool {
	return standardFinalizers.Has(name)
}
