package validation

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podValidationOptions are upstream's PodValidationOptions that matter for
// v1.32 with its default feature gates.
type podValidationOptions struct {
	// Allow an invalid pod-deletion-cost annotation (ratcheting).
	AllowInvalidPodDeletionCost bool
	// Allow invalid label values in pod (anti-)affinity selectors (ratcheting).
	AllowInvalidLabelValueInSelector bool
	// Allow hugepage quantities that are not whole pages (ratcheting).
	AllowIndivisibleHugePagesValues bool
	// Allow invalid topology spread constraint selectors (ratcheting).
	AllowInvalidTopologySpreadConstraintLabelSelector bool
	// Allow projected service account token paths that are not local (ratcheting).
	AllowNonLocalProjectedTokenPath bool
	// Allow namespaced sysctls with hostNetwork or hostIPC (ratcheting).
	AllowNamespacedSysctlsForHostNetAndHostIPC bool
	// The object is a Pod, not a PodSpec embedded in another kind.
	ResourceIsPod bool
	// Relaxed environment variable names (RelaxedEnvironmentVariableValidation, on in v1.32).
	AllowRelaxedEnvironmentVariableValidation bool
	// Relaxed DNS search names (RelaxedDNSSearchValidation, off in v1.32; ratcheting).
	AllowRelaxedDNSSearchValidation bool
	// A zero-second sleep lifecycle action (PodLifecycleSleepActionAllowZero, off in v1.32; ratcheting).
	AllowPodLifecycleSleepActionZeroValue bool
	// Only seLinuxChangePolicy Recursive (SELinuxMount is off in v1.32).
	AllowOnlyRecursiveSELinuxChangePolicy bool
	// Invalid label values in required node affinity (ratcheting).
	AllowInvalidLabelValueInRequiredNodeAffinity bool
}

// podValidationOptionsFor returns the options upstream derives from the new
// pod spec and, on update, the old one.
func podValidationOptionsFor(podMeta *metav1.ObjectMeta, spec, oldSpec *corev1.PodSpec, oldMeta *metav1.ObjectMeta) podValidationOptions {
	opts := podValidationOptions{
		AllowRelaxedEnvironmentVariableValidation: true,
		AllowOnlyRecursiveSELinuxChangePolicy:     true,
	}
	if oldSpec == nil {
		return opts
	}
	if oldMeta != nil {
		if _, err := podDeletionCost(oldMeta.Annotations); err != nil {
			opts.AllowInvalidPodDeletionCost = true
		}
	}
	opts.AllowInvalidLabelValueInSelector = hasInvalidLabelValueInAffinitySelector(oldSpec)
	opts.AllowIndivisibleHugePagesValues = hasIndivisibleHugePages(oldSpec)
	opts.AllowInvalidTopologySpreadConstraintLabelSelector = hasInvalidTopologySpreadSelector(oldSpec)
	opts.AllowNonLocalProjectedTokenPath = hasNonLocalProjectedTokenPath(oldSpec)
	opts.AllowNamespacedSysctlsForHostNetAndHostIPC = hasNamespacedSysctlWithHostNamespaces(oldSpec)
	opts.AllowRelaxedDNSSearchValidation = hasRelaxedDNSSearch(oldSpec)
	opts.AllowPodLifecycleSleepActionZeroValue = hasZeroSleepAction(oldSpec)
	opts.AllowInvalidLabelValueInRequiredNodeAffinity = hasInvalidLabelValueInRequiredNodeAffinity(oldSpec)
	return opts
}

// visitContainers calls fn for every container of the spec with its path.
func visitContainers(spec *corev1.PodSpec, specPath *field.Path, fn func(c *corev1.Container, p *field.Path)) {
	for i := range spec.InitContainers {
		fn(&spec.InitContainers[i], specPath.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		fn(&spec.Containers[i], specPath.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		fn((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), specPath.Child("ephemeralContainers").Index(i))
	}
}

func podDeletionCost(annotations map[string]string) (int32, error) {
	v, ok := annotations[corev1.PodDeletionCost]
	if !ok {
		return 0, nil
	}
	// A leading plus sign or leading zeros are not valid.
	validFirst := len(v) > 0 && (v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9'))
	if !validFirst {
		return 0, fmt.Errorf("invalid value %q", v)
	}
	i, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, err
	}
	return int32(i), nil
}

// validatePodSpecificAnnotations checks the annotations that carry pod
// settings.
func validatePodSpecificAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if value, isMirror := annotations[corev1.MirrorPodAnnotationKey]; isMirror && len(spec.NodeName) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.MirrorPodAnnotationKey), value, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if annotations[corev1.TolerationsAnnotationKey] != "" {
		var tolerations []corev1.Toleration
		if err := json.Unmarshal([]byte(annotations[corev1.TolerationsAnnotationKey]), &tolerations); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, corev1.TolerationsAnnotationKey, err.Error()))
		} else if len(tolerations) > 0 {
			allErrs = append(allErrs, validateTolerations(tolerations, fldPath.Child(corev1.TolerationsAnnotationKey))...)
		}
	}
	if !opts.AllowInvalidPodDeletionCost {
		if _, err := podDeletionCost(annotations); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.PodDeletionCost), annotations[corev1.PodDeletionCost], "must be a 32bit integer"))
		}
	}
	allErrs = append(allErrs, validateSeccompPodAnnotations(annotations, fldPath)...)
	allErrs = append(allErrs, validateAppArmorPodAnnotations(annotations, spec, fldPath)...)
	return allErrs
}

func validateSeccompProfileAnnotation(p string, fldPath *field.Path) field.ErrorList {
	if p == corev1.SeccompProfileRuntimeDefault || p == corev1.DeprecatedSeccompProfileDockerDefault || p == corev1.SeccompProfileNameUnconfined {
		return nil
	}
	if strings.HasPrefix(p, corev1.SeccompLocalhostProfileNamePrefix) {
		return validateLocalDescendingPath(strings.TrimPrefix(p, corev1.SeccompLocalhostProfileNamePrefix), fldPath)
	}
	return field.ErrorList{field.Invalid(fldPath, p, "must be a valid seccomp profile")}
}

func validateSeccompPodAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if p, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
		allErrs = append(allErrs, validateSeccompProfileAnnotation(p, fldPath.Child(corev1.SeccompPodAnnotationKey))...)
	}
	for _, k := range sets.List(sets.KeySet(annotations)) {
		if strings.HasPrefix(k, corev1.SeccompContainerAnnotationKeyPrefix) {
			allErrs = append(allErrs, validateSeccompProfileAnnotation(annotations[k], fldPath.Child(k))...)
		}
	}
	return allErrs
}

func validateAppArmorPodAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, k := range sets.List(sets.KeySet(annotations)) {
		if !strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			continue
		}
		p := annotations[k]
		containerName := strings.TrimPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix)
		if !podSpecHasContainer(spec, containerName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(k), containerName, "container not found"))
		}
		if p != "" && p != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && p != corev1.DeprecatedAppArmorBetaProfileNameUnconfined &&
			!strings.HasPrefix(p, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(k), p, fmt.Sprintf("invalid AppArmor profile name: %q", p)))
		}
	}
	return allErrs
}

func podSpecHasContainer(spec *corev1.PodSpec, name string) bool {
	found := false
	visitContainers(spec, field.NewPath("spec"), func(c *corev1.Container, _ *field.Path) {
		if c.Name == name {
			found = true
		}
	})
	return found
}

// validatePodSpec is upstream's ValidatePodSpec. podMeta is set only for a
// real pod (it is needed to check generic ephemeral volume claim names).
func validatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList

	if spec.TerminationGracePeriodSeconds == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	}
	gracePeriod := spec.TerminationGracePeriodSeconds
	hostUsers := spec.HostUsers == nil || *spec.HostUsers

	vols, vErrs := validateVolumes(spec.Volumes, podMeta, fldPath.Child("volumes"), opts)
	allErrs = append(allErrs, vErrs...)
	podClaimNames := sets.New[string]()
	for _, c := range spec.ResourceClaims {
		if c.Name != "" {
			podClaimNames.Insert(c.Name)
		}
	}
	allErrs = append(allErrs, validatePodResourceClaims(spec.ResourceClaims, fldPath.Child("resourceClaims"))...)
	allErrs = append(allErrs, validateContainers(spec.Containers, vols, podClaimNames, gracePeriod, fldPath.Child("containers"), opts, spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validateInitContainers(spec.InitContainers, spec.Containers, vols, podClaimNames, gracePeriod, fldPath.Child("initContainers"), opts, spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, podClaimNames, fldPath.Child("ephemeralContainers"), opts, spec.RestartPolicy, hostUsers)...)
	allErrs = append(allErrs, validatePodHostNetworkDeps(spec, fldPath, opts)...)
	allErrs = append(allErrs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"))...)
	allErrs = append(allErrs, validateDNSPolicy(spec.DNSPolicy, fldPath.Child("dnsPolicy"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validatePodSpecSecurityContext(spec, fldPath.Child("securityContext"), opts)...)
	allErrs = append(allErrs, validateImagePullSecrets(spec.ImagePullSecrets, fldPath.Child("imagePullSecrets"))...)
	allErrs = append(allErrs, validateAffinity(spec.Affinity, opts, fldPath.Child("affinity"))...)
	allErrs = append(allErrs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"), opts)...)
	allErrs = append(allErrs, validateReadinessGates(spec.ReadinessGates, fldPath.Child("readinessGates"))...)
	allErrs = append(allErrs, validateSchedulingGates(spec.SchedulingGates, fldPath.Child("schedulingGates"))...)
	allErrs = append(allErrs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"), opts)...)
	allErrs = append(allErrs, validateWindowsHostProcessPod(spec, fldPath)...)
	allErrs = append(allErrs, validateHostUsers(spec, fldPath)...)

	if len(spec.ServiceAccountName) > 0 {
		for _, msg := range apimachineryvalidation.ValidateServiceAccountName(spec.ServiceAccountName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccountName"), spec.ServiceAccountName, msg))
		}
	}
	if len(spec.NodeName) > 0 {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.NodeName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), spec.NodeName, msg))
		}
	}
	if spec.ActiveDeadlineSeconds != nil {
		value := *spec.ActiveDeadlineSeconds
		if value < 1 || value > math.MaxInt32 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), value, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	if len(spec.Hostname) > 0 {
		allErrs = append(allErrs, validateDNS1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if len(spec.Subdomain) > 0 {
		allErrs = append(allErrs, validateDNS1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	if len(spec.Tolerations) > 0 {
		allErrs = append(allErrs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	}
	if len(spec.HostAliases) > 0 {
		allErrs = append(allErrs, validateHostAliases(spec.HostAliases, fldPath.Child("hostAliases"))...)
	}
	if len(spec.PriorityClassName) > 0 {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.PriorityClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("priorityClassName"), spec.PriorityClassName, msg))
		}
	}
	if spec.RuntimeClassName != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*spec.RuntimeClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runtimeClassName"), *spec.RuntimeClassName, msg))
		}
	}
	if spec.PreemptionPolicy != nil {
		allErrs = append(allErrs, validatePreemptionPolicy(spec.PreemptionPolicy, fldPath.Child("preemptionPolicy"))...)
	}
	if spec.Overhead != nil {
		allErrs = append(allErrs, validateContainerResourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead}, nil, fldPath.Child("overhead"), opts)...)
	}
	if spec.OS != nil {
		osErrs := validateOS(spec.OS, fldPath.Child("os"))
		switch {
		case len(osErrs) > 0:
			allErrs = append(allErrs, osErrs...)
		case spec.OS.Name == corev1.Linux:
			allErrs = append(allErrs, validateLinux(spec, fldPath)...)
		case spec.OS.Name == corev1.Windows:
			allErrs = append(allErrs, validateWindows(spec, fldPath)...)
		}
	}
	return allErrs
}

func validatePodResourceClaims(claims []corev1.PodResourceClaim, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, claim := range claims {
		idxPath := fldPath.Index(i)
		switch {
		case claim.Name == "":
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		case names.Has(claim.Name):
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), claim.Name))
		default:
			allErrs = append(allErrs, validateDNS1123Label(claim.Name, idxPath.Child("name"))...)
			names.Insert(claim.Name)
		}
		if claim.ResourceClaimName != nil && claim.ResourceClaimTemplateName != nil {
			allErrs = append(allErrs, field.Invalid(idxPath, claim, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		}
		if claim.ResourceClaimName == nil && claim.ResourceClaimTemplateName == nil {
			allErrs = append(allErrs, field.Invalid(idxPath, claim, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
		if claim.ResourceClaimName != nil {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*claim.ResourceClaimName, false) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("resourceClaimName"), *claim.ResourceClaimName, msg))
			}
		}
		if claim.ResourceClaimTemplateName != nil {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*claim.ResourceClaimTemplateName, false) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("resourceClaimTemplateName"), *claim.ResourceClaimTemplateName, msg))
			}
		}
	}
	return allErrs
}

func validateRestartPolicy(policy corev1.RestartPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		valid := []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
		return field.ErrorList{field.NotSupported(fldPath, policy, valid)}
	}
}

func validatePreemptionPolicy(policy *corev1.PreemptionPolicy, fldPath *field.Path) field.ErrorList {
	switch *policy {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		valid := []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}
		return field.ErrorList{field.NotSupported(fldPath, *policy, valid)}
	}
}

func validateDNSPolicy(policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		valid := []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}
		return field.ErrorList{field.NotSupported(fldPath, policy, valid)}
	}
}

const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

func validatePodDNSConfig(dnsConfig *corev1.PodDNSConfig, dnsPolicy corev1.DNSPolicy, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if dnsPolicy == corev1.DNSNone {
		if dnsConfig == nil {
			return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(dnsConfig.Nameservers) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if dnsConfig == nil {
		return nil
	}
	if len(dnsConfig.Nameservers) > maxDNSNameservers {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nameservers"), dnsConfig.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range dnsConfig.Nameservers {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("nameservers").Index(i), ns)...)
	}
	if len(dnsConfig.Searches) > maxDNSSearchPaths {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), dnsConfig.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(dnsConfig.Searches, " ")) > maxDNSSearchListChars {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), dnsConfig.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, search := range dnsConfig.Searches {
		if opts.AllowRelaxedDNSSearchValidation {
			if search != "." {
				search = strings.TrimSuffix(search, ".")
				for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(search) {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("searches").Index(i), search, msg))
				}
			}
		} else {
			search = strings.TrimSuffix(search, ".")
			allErrs = append(allErrs, validateDNS1123Subdomain(search, fldPath.Child("searches").Index(i))...)
		}
	}
	for i, option := range dnsConfig.Options {
		if len(option.Name) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return allErrs
}

// validatePodHostNetworkDeps requires hostPort to equal containerPort with
// hostNetwork (0 is tolerated in templates, where it is defaulted later).
func validatePodHostNetworkDeps(spec *corev1.PodSpec, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var allErrs field.ErrorList
	containersPath := fldPath.Child("containers")
	for i, c := range spec.Containers {
		portsPath := containersPath.Index(i).Child("ports")
		for j, port := range c.Ports {
			if hp, cp := port.HostPort, port.ContainerPort; (opts.ResourceIsPod || hp != 0) && hp != cp {
				allErrs = append(allErrs, field.Invalid(portsPath.Index(j).Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return allErrs
}

func validateImagePullSecrets(secrets []corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range secrets {
		if !reflect.DeepEqual(corev1.LocalObjectReference{Name: s.Name}, s) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), s, "only name may be set"))
		}
	}
	return allErrs
}

func validateReadinessGates(gates []corev1.PodReadinessGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, g := range gates {
		allErrs = append(allErrs, validateQualifiedName(string(g.ConditionType), fldPath.Index(i).Child("conditionType"))...)
	}
	return allErrs
}

func validateSchedulingGates(gates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		allErrs = append(allErrs, validateQualifiedName(g.Name, fldPath.Index(i))...)
		if seen.Has(g.Name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return allErrs
}

func validateHostAliases(aliases []corev1.HostAlias, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, a := range aliases {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Index(i).Child("ip"), a.IP)...)
		for j, hostname := range a.Hostnames {
			allErrs = append(allErrs, validateDNS1123Subdomain(hostname, fldPath.Index(i).Child("hostnames").Index(j))...)
		}
	}
	return allErrs
}

func validateTaintEffect(effect corev1.TaintEffect, allowEmpty bool, fldPath *field.Path) field.ErrorList {
	if !allowEmpty && len(effect) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	switch effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	default:
		valid := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
		return field.ErrorList{field.NotSupported(fldPath, effect, valid)}
	}
}

func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := range tolerations {
		t := &tolerations[i]
		idxPath := fldPath.Index(i)
		if len(t.Key) > 0 {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, idxPath.Child("key"))...)
		}
		if len(t.Key) == 0 && t.Operator != corev1.TolerationOpExists {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("effect"), t.Effect,
				"effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), t.Value, strings.Join(errs, ";")))
			}
		case corev1.TolerationOpExists:
			if len(t.Value) > 0 {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			valid := []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("operator"), t.Operator, valid))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			allErrs = append(allErrs, validateTaintEffect(t.Effect, true, idxPath.Child("effect"))...)
		}
	}
	return allErrs
}

// Containers.

func validateContainers(containers []corev1.Container, volumes map[string]*corev1.VolumeSource, podClaimNames sets.Set[string], gracePeriod *int64, fldPath *field.Path, opts podValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	allNames := sets.New[string]()
	for i := range containers {
		ctr := &containers[i]
		path := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(ctr, volumes, podClaimNames, path, opts, podRestartPolicy, hostUsers)...)
		if allNames.Has(ctr.Name) {
			allErrs = append(allErrs, field.Duplicate(path.Child("name"), ctr.Name))
		} else {
			allNames.Insert(ctr.Name)
		}
		if ctr.Lifecycle != nil {
			allErrs = append(allErrs, validateLifecycle(ctr.Lifecycle, gracePeriod, path.Child("lifecycle"), opts)...)
		}
		allErrs = append(allErrs, validateLivenessProbe(ctr.LivenessProbe, gracePeriod, path.Child("livenessProbe"), opts)...)
		allErrs = append(allErrs, validateReadinessProbe(ctr.ReadinessProbe, gracePeriod, path.Child("readinessProbe"), opts)...)
		allErrs = append(allErrs, validateStartupProbe(ctr.StartupProbe, gracePeriod, path.Child("startupProbe"), opts)...)
		if ctr.RestartPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(path.Child("restartPolicy"), "may not be set for non-init containers"))
		}
	}
	allErrs = append(allErrs, checkHostPortConflicts(containers, fldPath)...)
	return allErrs
}

func validateInitContainers(containers, regularContainers []corev1.Container, volumes map[string]*corev1.VolumeSource, podClaimNames sets.Set[string], gracePeriod *int64, fldPath *field.Path, opts podValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	allNames := sets.New[string]()
	for _, c := range regularContainers {
		allNames.Insert(c.Name)
	}
	for i := range containers {
		ctr := &containers[i]
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(ctr, volumes, podClaimNames, idxPath, opts, podRestartPolicy, hostUsers)...)

		restartAlways := false
		if ctr.RestartPolicy != nil {
			if *ctr.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				allErrs = append(allErrs, field.NotSupported(idxPath.Child("restartPolicy"), *ctr.RestartPolicy, []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways}))
			}
			restartAlways = *ctr.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
		if allNames.Has(ctr.Name) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), ctr.Name))
		} else if len(ctr.Name) > 0 {
			allNames.Insert(ctr.Name)
		}
		// Init containers run one by one, so their host ports are checked one by one.
		allErrs = append(allErrs, checkHostPortConflicts([]corev1.Container{*ctr}, fldPath)...)

		if restartAlways {
			if ctr.Lifecycle != nil {
				allErrs = append(allErrs, validateLifecycle(ctr.Lifecycle, gracePeriod, idxPath.Child("lifecycle"), opts)...)
			}
			allErrs = append(allErrs, validateLivenessProbe(ctr.LivenessProbe, gracePeriod, idxPath.Child("livenessProbe"), opts)...)
			allErrs = append(allErrs, validateReadinessProbe(ctr.ReadinessProbe, gracePeriod, idxPath.Child("readinessProbe"), opts)...)
			allErrs = append(allErrs, validateStartupProbe(ctr.StartupProbe, gracePeriod, idxPath.Child("startupProbe"), opts)...)
		} else {
			const msg = "may not be set for init containers without restartPolicy=Always"
			if ctr.Lifecycle != nil {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("lifecycle"), msg))
			}
			if ctr.LivenessProbe != nil {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("livenessProbe"), msg))
			}
			if ctr.ReadinessProbe != nil {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("readinessProbe"), msg))
			}
			if ctr.StartupProbe != nil {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("startupProbe"), msg))
			}
		}
	}
	return allErrs
}

// allowedEphemeralContainerFields lists the fields an ephemeral container may set.
var allowedEphemeralContainerFields = map[string]bool{
	"Name":                     true,
	"Image":                    true,
	"Command":                  true,
	"Args":                     true,
	"WorkingDir":               true,
	"EnvFrom":                  true,
	"Env":                      true,
	"VolumeMounts":             true,
	"VolumeDevices":            true,
	"TerminationMessagePath":   true,
	"TerminationMessagePolicy": true,
	"ImagePullPolicy":          true,
	"SecurityContext":          true,
	"Stdin":                    true,
	"StdinOnce":                true,
	"TTY":                      true,
}

func validateEphemeralContainers(ephemeral []corev1.EphemeralContainer, containers, initContainers []corev1.Container, volumes map[string]*corev1.VolumeSource, podClaimNames sets.Set[string], fldPath *field.Path, opts podValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	if len(ephemeral) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	otherNames, allNames := sets.New[string](), sets.New[string]()
	for _, c := range containers {
		otherNames.Insert(c.Name)
		allNames.Insert(c.Name)
	}
	for _, c := range initContainers {
		otherNames.Insert(c.Name)
		allNames.Insert(c.Name)
	}
	for i := range ephemeral {
		ec := &ephemeral[i]
		idxPath := fldPath.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		allErrs = append(allErrs, validateContainerCommon(c, volumes, podClaimNames, idxPath, opts, podRestartPolicy, hostUsers)...)
		allErrs = append(allErrs, validateContainerOnlyForPod(c, idxPath)...)
		if allNames.Has(ec.Name) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), ec.Name))
		} else {
			allNames.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !otherNames.Has(ec.TargetContainerName) {
			allErrs = append(allErrs, field.NotFound(idxPath.Child("targetContainerName"), ec.TargetContainerName))
		}
		allErrs = append(allErrs, validateFieldAllowList(ec.EphemeralContainerCommon, allowedEphemeralContainerFields, "cannot be set for an Ephemeral Container", idxPath)...)
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return allErrs
}

// validateFieldAllowList reports every set field of a struct value that is
// not in allowedFields.
func validateFieldAllowList(value interface{}, allowedFields map[string]bool, errorText string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	t, v := reflect.TypeOf(value), reflect.ValueOf(value)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if allowedFields[f.Name] {
			continue
		}
		if !v.Field(i).IsZero() {
			r, n := utf8.DecodeRuneInString(f.Name)
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(string(unicode.ToLower(r))+f.Name[n:]), errorText))
		}
	}
	return allErrs
}

func validateContainerCommon(ctr *corev1.Container, volumes map[string]*corev1.VolumeSource, podClaimNames sets.Set[string], path *field.Path, opts podValidationOptions, podRestartPolicy corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var allErrs field.ErrorList
	namePath := path.Child("name")
	if len(ctr.Name) == 0 {
		allErrs = append(allErrs, field.Required(namePath, ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Label(ctr.Name, namePath)...)
	}
	if len(ctr.Image) == 0 {
		allErrs = append(allErrs, field.Required(path.Child("image"), ""))
	}
	switch ctr.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		allErrs = append(allErrs, field.Required(path.Child("terminationMessagePolicy"), ""))
	default:
		supported := []corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}
		allErrs = append(allErrs, field.NotSupported(path.Child("terminationMessagePolicy"), ctr.TerminationMessagePolicy, supported))
	}
	volMounts := make(map[string]string, len(ctr.VolumeMounts))
	for _, m := range ctr.VolumeMounts {
		volMounts[m.Name] = m.MountPath
	}
	volDevices := make(map[string]string, len(ctr.VolumeDevices))
	for _, d := range ctr.VolumeDevices {
		volDevices[d.Name] = d.DevicePath
	}
	allErrs = append(allErrs, validateContainerPorts(ctr.Ports, path.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(ctr.Env, path.Child("env"), opts)...)
	allErrs = append(allErrs, validateEnvFrom(ctr.EnvFrom, path.Child("envFrom"), opts)...)
	allErrs = append(allErrs, validateVolumeMounts(ctr.VolumeMounts, volDevices, volumes, ctr, path.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateVolumeDevices(ctr.VolumeDevices, volMounts, volumes, path.Child("volumeDevices"))...)
	allErrs = append(allErrs, validatePullPolicy(ctr.ImagePullPolicy, path.Child("imagePullPolicy"))...)
	allErrs = append(allErrs, validateContainerResourceRequirements(&ctr.Resources, podClaimNames, path.Child("resources"), opts)...)
	allErrs = append(allErrs, validateResizePolicy(ctr.ResizePolicy, path.Child("resizePolicy"), podRestartPolicy)...)
	allErrs = append(allErrs, validateSecurityContext(ctr.SecurityContext, path.Child("securityContext"), hostUsers)...)
	return allErrs
}

// validateContainerOnlyForPod holds the checks upstream applies to pods but
// not to templates.
func validateContainerOnlyForPod(ctr *corev1.Container, path *field.Path) field.ErrorList {
	if len(ctr.Image) != len(strings.TrimSpace(ctr.Image)) {
		return field.ErrorList{field.Invalid(path.Child("image"), ctr.Image, "must not have leading or trailing whitespace")}
	}
	return nil
}

var supportedPortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allNames := sets.New[string]()
	for i, port := range ports {
		idxPath := fldPath.Index(i)
		if len(port.Name) > 0 {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), port.Name, msg))
				}
			} else if allNames.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), port.Name))
			} else {
				allNames.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostPort"), port.HostPort, msg))
			}
		}
		if len(port.Protocol) == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("protocol"), ""))
		} else if !supportedPortProtocols.Has(port.Protocol) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
		}
	}
	return allErrs
}

// checkHostPortConflicts rejects two ports with the same protocol, host IP
// and host port.
func checkHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for ci, ctr := range containers {
		portsPath := fldPath.Index(ci).Child("ports")
		for pi, p := range ctr.Ports {
			if p.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", p.Protocol, p.HostIP, p.HostPort)
			if seen.Has(key) {
				allErrs = append(allErrs, field.Duplicate(portsPath.Index(pi).Child("hostPort"), key))
			} else {
				seen.Insert(key)
			}
		}
	}
	return allErrs
}

func validateEnv(vars []corev1.EnvVar, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		idxPath := fldPath.Index(i)
		if len(ev.Name) == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		} else {
			var msgs []string
			if opts.AllowRelaxedEnvironmentVariableValidation {
				msgs = validation.IsRelaxedEnvVarName(ev.Name)
			} else {
				msgs = validation.IsEnvVarName(ev.Name)
			}
			for _, msg := range msgs {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), ev.Name, msg))
			}
		}
		allErrs = append(allErrs, validateEnvVarValueFrom(ev, idxPath.Child("valueFrom"))...)
	}
	return allErrs
}

var validEnvDownwardAPIFieldPathExpressions = sets.New(
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"spec.nodeName",
	"spec.serviceAccountName",
	"status.hostIP",
	"status.hostIPs",
	"status.podIP",
	"status.podIPs",
)

var validVolumeDownwardAPIFieldPathExpressions = sets.New(
	"metadata.name",
	"metadata.namespace",
	"metadata.labels",
	"metadata.annotations",
	"metadata.uid",
)

var validContainerResourceFieldPathExpressions = sets.New(
	"limits.cpu",
	"limits.memory",
	"limits.ephemeral-storage",
	"requests.cpu",
	"requests.memory",
	"requests.ephemeral-storage",
)

var validContainerResourceFieldPathPrefixes = sets.New("requests.hugepages-", "limits.hugepages-")

func validateEnvVarValueFrom(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	if ev.ValueFrom == nil {
		return nil
	}
	var allErrs field.ErrorList
	numSources := 0
	if ev.ValueFrom.FieldRef != nil {
		numSources++
		allErrs = append(allErrs, validateObjectFieldSelector(ev.ValueFrom.FieldRef, validEnvDownwardAPIFieldPathExpressions, fldPath.Child("fieldRef"))...)
	}
	if ev.ValueFrom.ResourceFieldRef != nil {
		numSources++
		allErrs = append(allErrs, validateContainerResourceFieldSelector(ev.ValueFrom.ResourceFieldRef, fldPath.Child("resourceFieldRef"), false)...)
	}
	if ev.ValueFrom.ConfigMapKeyRef != nil {
		numSources++
		allErrs = append(allErrs, validateKeySelector(ev.ValueFrom.ConfigMapKeyRef.Name, ev.ValueFrom.ConfigMapKeyRef.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if ev.ValueFrom.SecretKeyRef != nil {
		numSources++
		allErrs = append(allErrs, validateKeySelector(ev.ValueFrom.SecretKeyRef.Name, ev.ValueFrom.SecretKeyRef.Key, fldPath.Child("secretKeyRef"))...)
	}
	switch {
	case numSources == 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case len(ev.Value) != 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case numSources > 1:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return allErrs
}

// splitMaybeSubscriptedPath splits "metadata.labels['key']" into its path
// and subscript.
func splitMaybeSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	parts := strings.SplitN(strings.TrimSuffix(fieldPath, "']"), "['", 2)
	if len(parts) < 2 || len(parts[0]) == 0 {
		return fieldPath, "", false
	}
	return parts[0], parts[1], true
}

// convertDownwardAPIFieldLabel is upstream's ConvertDownwardAPIFieldLabel
// for the v1 pod field labels.
func convertDownwardAPIFieldLabel(version, label string) (string, error) {
	if version != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", version)
	}
	if path, _, ok := splitMaybeSubscriptedPath(label); ok {
		switch path {
		case "metadata.annotations", "metadata.labels":
			return label, nil
		default:
			return "", fmt.Errorf("field label does not support subscript: %s", label)
		}
	}
	switch label {
	case "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
		"spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
		"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs":
		return label, nil
	case "spec.host":
		return "spec.nodeName", nil
	default:
		return "", fmt.Errorf("field label not supported: %s", label)
	}
}

func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, expressions sets.Set[string], fldPath *field.Path) field.ErrorList {
	if len(fs.APIVersion) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if len(fs.FieldPath) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	internalFieldPath, err := convertDownwardAPIFieldLabel(fs.APIVersion, fs.FieldPath)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", err))}
	}
	path, subscript, ok := splitMaybeSubscriptedPath(internalFieldPath)
	if ok {
		switch path {
		case "metadata.annotations":
			return validateQualifiedName(strings.ToLower(subscript), fldPath)
		case "metadata.labels":
			return validateQualifiedName(subscript, fldPath)
		default:
			return field.ErrorList{field.Invalid(fldPath, path, "does not support subscript")}
		}
	}
	if !expressions.Has(path) {
		return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), path, sets.List(expressions))}
	}
	return nil
}

func validateContainerResourceFieldSelector(fs *corev1.ResourceFieldSelector, fldPath *field.Path, volume bool) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case volume && len(fs.ContainerName) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("containerName"), ""))
	case len(fs.Resource) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("resource"), ""))
	case !validContainerResourceFieldPathExpressions.Has(fs.Resource):
		foundPrefix := false
		for _, prefix := range sets.List(validContainerResourceFieldPathPrefixes) {
			if strings.HasPrefix(fs.Resource, prefix) {
				foundPrefix = true
			}
		}
		if !foundPrefix {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("resource"), fs.Resource, sets.List(validContainerResourceFieldPathExpressions)))
		}
	}
	allErrs = append(allErrs, validateContainerResourceDivisor(fs.Resource, fs.Divisor, fldPath)...)
	return allErrs
}

var (
	validDivisorsForCPU    = sets.New("1m", "1")
	validDivisorsForMemory = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)

func validateContainerResourceDivisor(rName string, divisor resource.Quantity, fldPath *field.Path) field.ErrorList {
	if divisor.Cmp(resource.Quantity{}) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	switch rName {
	case "limits.cpu", "requests.cpu":
		if !validDivisorsForCPU.Has(divisor.String()) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !validDivisorsForMemory.Has(divisor.String()) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !validDivisorsForMemory.Has(divisor.String()) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource"))
		}
	}
	if strings.HasPrefix(rName, "requests.hugepages-") || strings.HasPrefix(rName, "limits.hugepages-") {
		if !validDivisorsForMemory.Has(divisor.String()) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), rName, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource"))
		}
	}
	return allErrs
}

// validateKeySelector validates a configMapKeyRef or secretKeyRef.
func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	if len(key) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
		}
	}
	return allErrs
}

func validateEnvFrom(vars []corev1.EnvFromSource, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		idxPath := fldPath.Index(i)
		if len(ev.Prefix) > 0 {
			var msgs []string
			if opts.AllowRelaxedEnvironmentVariableValidation {
				msgs = validation.IsRelaxedEnvVarName(ev.Prefix)
			} else {
				msgs = validation.IsEnvVarName(ev.Prefix)
			}
			for _, msg := range msgs {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("prefix"), ev.Prefix, msg))
			}
		}
		numSources := 0
		if ev.ConfigMapRef != nil {
			numSources++
			allErrs = append(allErrs, validateEnvSourceName(ev.ConfigMapRef.Name, idxPath.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			numSources++
			allErrs = append(allErrs, validateEnvSourceName(ev.SecretRef.Name, idxPath.Child("secretRef"))...)
		}
		if numSources == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if numSources > 1 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return allErrs
}

func validateEnvSourceName(name string, fldPath *field.Path) field.ErrorList {
	if len(name) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("name"), "")}
	}
	var allErrs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, true) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	return allErrs
}

var supportedPullPolicies = sets.New(corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)

func validatePullPolicy(policy corev1.PullPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	default:
		return field.ErrorList{field.NotSupported(fldPath, policy, sets.List(supportedPullPolicies))}
	}
}

var (
	supportedResizeResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory)
	supportedResizePolicies  = sets.New(corev1.NotRequired, corev1.RestartContainer)
)

func validateResizePolicy(policies []corev1.ContainerResizePolicy, fldPath *field.Path, podRestartPolicy corev1.RestartPolicy) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, p := range policies {
		if seen.Has(p.ResourceName) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), p.ResourceName))
		}
		seen.Insert(p.ResourceName)
		switch p.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.ResourceName, sets.List(supportedResizeResources)))
		}
		switch p.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			allErrs = append(allErrs, field.Required(fldPath, ""))
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, p.RestartPolicy, sets.List(supportedResizePolicies)))
		}
		if podRestartPolicy == corev1.RestartPolicyNever && p.RestartPolicy != corev1.NotRequired {
			allErrs = append(allErrs, field.Invalid(fldPath, p.RestartPolicy, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
		}
	}
	return allErrs
}

// Probes and lifecycle handlers.

func validateLivenessProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath, opts)
	if probe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

func validateReadinessProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath, opts)
	if probe.TerminationGracePeriodSeconds != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), probe.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	return allErrs
}

func validateStartupProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	if probe == nil {
		return nil
	}
	allErrs := validateProbe(probe, gracePeriod, fldPath, opts)
	if probe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

func validateProbe(probe *corev1.Probe, gracePeriod *int64, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	h := commonHandler{Exec: probe.Exec, HTTPGet: probe.HTTPGet, TCPSocket: probe.TCPSocket, GRPC: probe.GRPC}
	allErrs := validateHandler(h, gracePeriod, fldPath, opts)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.InitialDelaySeconds), fldPath.Child("initialDelaySeconds"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.TimeoutSeconds), fldPath.Child("timeoutSeconds"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.PeriodSeconds), fldPath.Child("periodSeconds"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.SuccessThreshold), fldPath.Child("successThreshold"))...)
	allErrs = append(allErrs, validateNonnegativeField(int64(probe.FailureThreshold), fldPath.Child("failureThreshold"))...)
	if probe.TerminationGracePeriodSeconds != nil && *probe.TerminationGracePeriodSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *probe.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	return allErrs
}

type commonHandler struct {
	Exec      *corev1.ExecAction
	HTTPGet   *corev1.HTTPGetAction
	TCPSocket *corev1.TCPSocketAction
	GRPC      *corev1.GRPCAction
	Sleep     *corev1.SleepAction
}

func validateLifecycle(lifecycle *corev1.Lifecycle, gracePeriod *int64, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if h := lifecycle.PostStart; h != nil {
		allErrs = append(allErrs, validateHandler(commonHandler{Exec: h.Exec, HTTPGet: h.HTTPGet, TCPSocket: h.TCPSocket, Sleep: h.Sleep}, gracePeriod, fldPath.Child("postStart"), opts)...)
	}
	if h := lifecycle.PreStop; h != nil {
		allErrs = append(allErrs, validateHandler(commonHandler{Exec: h.Exec, HTTPGet: h.HTTPGet, TCPSocket: h.TCPSocket, Sleep: h.Sleep}, gracePeriod, fldPath.Child("preStop"), opts)...)
	}
	return allErrs
}

func validateHandler(h commonHandler, gracePeriod *int64, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	numHandlers := 0
	check := func(set bool, name string, validate func() field.ErrorList) {
		if !set {
			return
		}
		if numHandlers > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 handler type"))
			return
		}
		numHandlers++
		allErrs = append(allErrs, validate()...)
	}
	check(h.Exec != nil, "exec", func() field.ErrorList {
		if len(h.Exec.Command) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("exec", "command"), "")}
		}
		return nil
	})
	check(h.HTTPGet != nil, "httpGet", func() field.ErrorList { return validateHTTPGetAction(h.HTTPGet, fldPath.Child("httpGet")) })
	check(h.TCPSocket != nil, "tcpSocket", func() field.ErrorList {
		return validatePortNumOrName(h.TCPSocket.Port, fldPath.Child("tcpSocket", "port"))
	})
	check(h.GRPC != nil, "grpc", func() field.ErrorList {
		return validatePortNumOrName(intstr.FromInt32(h.GRPC.Port), fldPath.Child("grpc", "port"))
	})
	check(h.Sleep != nil, "sleep", func() field.ErrorList { return validateSleepAction(h.Sleep, gracePeriod, fldPath.Child("sleep"), opts) })
	if numHandlers == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a handler type"))
	}
	return allErrs
}

func validateSleepAction(sleep *corev1.SleepAction, gracePeriod *int64, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	if gracePeriod == nil {
		return nil
	}
	if opts.AllowPodLifecycleSleepActionZeroValue {
		if sleep.Seconds < 0 || sleep.Seconds > *gracePeriod {
			return field.ErrorList{field.Invalid(fldPath, sleep.Seconds, fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *gracePeriod))}
		}
		return nil
	}
	if sleep.Seconds <= 0 || sleep.Seconds > *gracePeriod {
		return field.ErrorList{field.Invalid(fldPath, sleep.Seconds, fmt.Sprintf("must be greater than 0 and less than terminationGracePeriodSeconds (%d). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.", *gracePeriod))}
	}
	return nil
}

var supportedHTTPSchemes = sets.New(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)

func validateHTTPGetAction(http *corev1.HTTPGetAction, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(http.Path) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	}
	allErrs = append(allErrs, validatePortNumOrName(http.Port, fldPath.Child("port"))...)
	if !supportedHTTPSchemes.Has(http.Scheme) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scheme"), http.Scheme, sets.List(supportedHTTPSchemes)))
	}
	for _, header := range http.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(header.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("httpHeaders"), header.Name, msg))
		}
	}
	return allErrs
}

func validatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.StrVal, msg))
		}
	default:
		allErrs = append(allErrs, field.InternalError(fldPath, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return allErrs
}

// Resources.

func validateContainerResourceRequirements(req *corev1.ResourceRequirements, podClaimNames sets.Set[string], fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	limPath := fldPath.Child("limits")
	reqPath := fldPath.Child("requests")
	limContainsCPUOrMemory, reqContainsCPUOrMemory := false, false
	limContainsHugePages, reqContainsHugePages := false, false
	qosResources := sets.New(corev1.ResourceCPU, corev1.ResourceMemory)

	for _, name := range sets.List(sets.KeySet(req.Limits)) {
		quantity := req.Limits[name]
		path := limPath.Key(string(name))
		allErrs = append(allErrs, validateContainerResourceName(name, path)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, quantity, path)...)
		if isHugePageResourceName(name) {
			limContainsHugePages = true
			if !opts.AllowIndivisibleHugePagesValues && !isHugePageResourceValueDivisible(name, quantity) {
				allErrs = append(allErrs, field.Invalid(path, quantity.String(), fmt.Sprintf("%s is not positive integer multiple of %s", quantity.String(), name)))
			}
		}
		if qosResources.Has(name) {
			limContainsCPUOrMemory = true
		}
	}
	for _, name := range sets.List(sets.KeySet(req.Requests)) {
		quantity := req.Requests[name]
		path := reqPath.Key(string(name))
		allErrs = append(allErrs, validateContainerResourceName(name, path)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, quantity, path)...)
		if limit, ok := req.Limits[name]; ok {
			if quantity.Cmp(limit) != 0 && !isOvercommitAllowed(name) {
				allErrs = append(allErrs, field.Invalid(reqPath, quantity.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			} else if quantity.Cmp(limit) > 0 {
				allErrs = append(allErrs, field.Invalid(reqPath, quantity.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			}
		} else if !isOvercommitAllowed(name) {
			allErrs = append(allErrs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePageResourceName(name) {
			reqContainsHugePages = true
			if !opts.AllowIndivisibleHugePagesValues && !isHugePageResourceValueDivisible(name, quantity) {
				allErrs = append(allErrs, field.Invalid(path, quantity.String(), fmt.Sprintf("%s is not positive integer multiple of %s", quantity.String(), name)))
			}
		}
		if qosResources.Has(name) {
			reqContainsCPUOrMemory = true
		}
	}
	if !limContainsCPUOrMemory && !reqContainsCPUOrMemory && (reqContainsHugePages || limContainsHugePages) {
		allErrs = append(allErrs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	allErrs = append(allErrs, validateResourceClaimNames(req.Claims, podClaimNames, fldPath.Child("claims"))...)
	return allErrs
}

func validateResourceClaimNames(claims []corev1.ResourceClaim, podClaimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, claim := range claims {
		name := claim.Name
		if name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
			continue
		}
		if names.Has(name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), name))
		} else {
			key := name
			if claim.Request != "" {
				allErrs = append(allErrs, validateDNS1123Label(claim.Request, fldPath.Index(i).Child("request"))...)
				key += "/" + claim.Request
			}
			if names.Has(key) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), key))
			} else if claim.Request == "" {
				for existing := range names {
					if idx := strings.Index(existing, "/"); idx >= 0 && existing[:idx] == name {
						allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), name))
					}
				}
			}
			names.Insert(key)
		}
		if !podClaimNames.Has(name) {
			e := field.NotFound(fldPath.Index(i), name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			if len(podClaimNames) == 0 {
				e.Detail += " which is empty"
			} else {
				e.Detail += ": " + strings.Join(sets.List(podClaimNames), ", ")
			}
			allErrs = append(allErrs, e)
		}
	}
	return allErrs
}

// validateResourceName validates a compute resource name.
func validateResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") && !isStandardResourceName(name) {
		return append(allErrs, field.Invalid(fldPath, name, "must be a standard resource type or fully qualified"))
	}
	return allErrs
}

func validateContainerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(name, fldPath)
	if !strings.Contains(string(name), "/") {
		if !isStandardContainerResourceName(name) {
			return append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResourceName(name) {
		return append(allErrs, field.Invalid(fldPath, name, "doesn't follow extended resource name standard"))
	}
	return allErrs
}

func validateResourceQuantityValue(name corev1.ResourceName, value resource.Quantity, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegativeQuantity(value, fldPath)
	if isIntegerResourceName(name) && value.MilliValue()%int64(1000) != int64(0) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, isNotIntegerErrorMsg))
	}
	return allErrs
}

// Security contexts.

const (
	sysctlSegmentFmt      = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlContainSlashFmt = "(" + sysctlSegmentFmt + "[\\./])*" + sysctlSegmentFmt
	sysctlMaxLength       = 253
)

var sysctlContainSlashRegexp = regexp.MustCompile("^" + sysctlContainSlashFmt + "$")

func isValidSysctlName(name string) bool {
	return len(name) <= sysctlMaxLength && sysctlContainSlashRegexp.MatchString(name)
}

type sysctlNamespace int

const (
	sysctlUnknownNamespace sysctlNamespace = iota
	sysctlNetNamespace
	sysctlIPCNamespace
)

// sysctlNamespaceOf tells which Linux namespace a sysctl belongs to, as
// upstream's component-helpers sysctl.GetNamespace does.
func sysctlNamespaceOf(sysctl string) sysctlNamespace {
	sysctl = strings.ReplaceAll(sysctl, "/", ".")
	switch {
	case strings.HasPrefix(sysctl, "net."):
		return sysctlNetNamespace
	case sysctl == "kernel.shmall", sysctl == "kernel.shmmax", sysctl == "kernel.shmmni",
		sysctl == "kernel.shm_rmid_forced", sysctl == "kernel.msgmax", sysctl == "kernel.msgmnb",
		sysctl == "kernel.msgmni", sysctl == "kernel.sem", strings.HasPrefix(sysctl, "fs.mqueue."):
		return sysctlIPCNamespace
	}
	return sysctlUnknownNamespace
}

func validateSysctls(spec *corev1.PodSpec, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, s := range spec.SecurityContext.Sysctls {
		namePath := fldPath.Index(i).Child("name")
		switch {
		case len(s.Name) == 0:
			allErrs = append(allErrs, field.Required(namePath, ""))
		case !isValidSysctlName(s.Name):
			allErrs = append(allErrs, field.Invalid(namePath, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlContainSlashRegexp)))
		case names.Has(s.Name):
			allErrs = append(allErrs, field.Duplicate(namePath, s.Name))
		}
		if !opts.AllowNamespacedSysctlsForHostNetAndHostIPC {
			ns := sysctlNamespaceOf(s.Name)
			switch {
			case spec.HostNetwork && ns == sysctlNetNamespace:
				allErrs = append(allErrs, field.Invalid(namePath, s.Name, "may not be specified when 'hostNetwork' is true"))
			case spec.HostIPC && ns == sysctlIPCNamespace:
				allErrs = append(allErrs, field.Invalid(namePath, s.Name, "may not be specified when 'hostIPC' is true"))
			}
		}
		names.Insert(s.Name)
	}
	return allErrs
}

// validatePodSpecSecurityContext checks the pod security context and the
// host namespace settings that upstream keeps inside it internally.
func validatePodSpecSecurityContext(spec *corev1.PodSpec, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if spec.ShareProcessNamespace != nil && spec.HostPID && *spec.ShareProcessNamespace {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("shareProcessNamespace"), *spec.ShareProcessNamespace, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	sc := spec.SecurityContext
	if sc == nil {
		return allErrs
	}
	if sc.FSGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.FSGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("fsGroup"), *sc.FSGroup, msg))
		}
	}
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	for g, gid := range sc.SupplementalGroups {
		for _, msg := range validation.IsValidGroupID(gid) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("supplementalGroups").Index(g), gid, msg))
		}
	}
	if len(sc.Sysctls) != 0 {
		allErrs = append(allErrs, validateSysctls(spec, fldPath.Child("sysctls"), opts)...)
	}
	if sc.FSGroupChangePolicy != nil {
		valid := sets.New(corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways)
		if !valid.Has(*sc.FSGroupChangePolicy) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("fsGroupChangePolicy"), *sc.FSGroupChangePolicy, sets.List(valid)))
		}
	}
	allErrs = append(allErrs, validateSeccompProfileField(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	allErrs = append(allErrs, validateWindowsSecurityContextOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	allErrs = append(allErrs, validateAppArmorProfileField(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	if sc.SupplementalGroupsPolicy != nil {
		valid := sets.New(corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict)
		if !valid.Has(*sc.SupplementalGroupsPolicy) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("supplementalGroupsPolicy"), *sc.SupplementalGroupsPolicy, sets.List(valid)))
		}
	}
	if sc.SELinuxChangePolicy != nil {
		if opts.AllowOnlyRecursiveSELinuxChangePolicy {
			if *sc.SELinuxChangePolicy != corev1.SELinuxChangePolicyRecursive {
				allErrs = append(allErrs, field.NotSupported(fldPath.Child("seLinuxChangePolicy"), *sc.SELinuxChangePolicy, []corev1.PodSELinuxChangePolicy{corev1.SELinuxChangePolicyRecursive}))
			}
		} else {
			valid := sets.New(corev1.SELinuxChangePolicyRecursive, corev1.SELinuxChangePolicyMountOption)
			if !valid.Has(*sc.SELinuxChangePolicy) {
				allErrs = append(allErrs, field.NotSupported(fldPath.Child("seLinuxChangePolicy"), *sc.SELinuxChangePolicy, sets.List(valid)))
			}
		}
	}
	return allErrs
}

func validateSecurityContext(sc *corev1.SecurityContext, fldPath *field.Path, hostUsers bool) field.ErrorList {
	if sc == nil {
		return nil
	}
	var allErrs field.ErrorList
	if sc.RunAsUser != nil {
		for _, msg := range validation.IsValidUserID(*sc.RunAsUser) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	if sc.ProcMount != nil {
		switch *sc.ProcMount {
		case corev1.DefaultProcMount, corev1.UnmaskedProcMount:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("procMount"), *sc.ProcMount, []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}))
		}
		if hostUsers && *sc.ProcMount == corev1.UnmaskedProcMount {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("procMount"), *sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	allErrs = append(allErrs, validateSeccompProfileField(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if string(c) == "CAP_SYS_ADMIN" {
					allErrs = append(allErrs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	allErrs = append(allErrs, validateWindowsSecurityContextOptions(sc.WindowsOptions, fldPath.Child("windowsOptions"))...)
	allErrs = append(allErrs, validateAppArmorProfileField(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	return allErrs
}

func validateSeccompProfileField(sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when seccompProfile is set"))
	default:
		valid := []corev1.SeccompProfileType{corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), sp.Type, valid))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			allErrs = append(allErrs, validateLocalDescendingPath(*sp.LocalhostProfile, fldPath.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), sp, "can only be set when seccomp type is Localhost"))
	}
	return allErrs
}

func validateAppArmorProfileField(profile *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	if profile == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch profile.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		if profile.LocalhostProfile == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		} else {
			trimmed := strings.TrimSpace(*profile.LocalhostProfile)
			if trimmed != *profile.LocalhostProfile {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), *profile.LocalhostProfile, "must not be padded with whitespace"))
			} else if trimmed == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
			}
			const maxLocalhostProfileLength = 4095
			if len(*profile.LocalhostProfile) > maxLocalhostProfileLength {
				allErrs = append(allErrs, field.TooLong(fldPath.Child("localhostProfile"), "", maxLocalhostProfileLength))
			}
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if profile.LocalhostProfile != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), profile.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when appArmorProfile is set"))
	default:
		valid := []corev1.AppArmorProfileType{corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), profile.Type, valid))
	}
	return allErrs
}

const (
	maxGMSACredentialSpecLengthInKiB = 64
	maxGMSACredentialSpecLength      = maxGMSACredentialSpecLengthInKiB * 1024
	maxRunAsUserNameDomainLength     = 256
	maxRunAsUserNameUserLength       = 104
)

var (
	ctrlRegex                      = regexp.MustCompile(`[[:cntrl:]]+`)
	validNetBiosRegex              = regexp.MustCompile(`^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`)
	dnsLabelFormat                 = `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`
	validWindowsUserDomainDNSRegex = regexp.MustCompile(fmt.Sprintf(`^%s(?:\.%s)*$`, dnsLabelFormat, dnsLabelFormat))
	invalidUserNameCharsRegex      = regexp.MustCompile(`["/\\:;|=,\+\*\?<>@\[\]]`)
	invalidUserNameDotsSpacesRegex = regexp.MustCompile(`^[\. ]+$`)
)

func validateWindowsSecurityContextOptions(opts *corev1.WindowsSecurityContextOptions, fldPath *field.Path) field.ErrorList {
	if opts == nil {
		return nil
	}
	var allErrs field.ErrorList
	if opts.GMSACredentialSpecName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*opts.GMSACredentialSpecName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpecName"), opts.GMSACredentialSpecName, msg))
		}
	}
	if opts.GMSACredentialSpec != nil {
		if l := len(*opts.GMSACredentialSpec); l == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpec"), opts.GMSACredentialSpec, "gmsaCredentialSpec cannot be an empty string"))
		} else if l > maxGMSACredentialSpecLength {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("gmsaCredentialSpec"), opts.GMSACredentialSpec, fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", maxGMSACredentialSpecLengthInKiB)))
		}
	}
	if opts.RunAsUserName != nil {
		userPath := fldPath.Child("runAsUserName")
		name := *opts.RunAsUserName
		parts := strings.Split(name, "\\")
		switch {
		case len(name) == 0:
			allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, "runAsUserName cannot be an empty string"))
		case ctrlRegex.MatchString(name):
			allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, "runAsUserName cannot contain control characters"))
		case len(parts) > 2:
			allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, "runAsUserName cannot contain more than one backslash"))
		default:
			hasDomain, domain, user := false, "", parts[0]
			if len(parts) == 2 {
				hasDomain, domain, user = true, parts[0], parts[1]
			}
			if len(domain) >= maxRunAsUserNameDomainLength {
				allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, fmt.Sprintf("runAsUserName's Domain length must be under %d characters", maxRunAsUserNameDomainLength)))
			}
			if hasDomain && !(validNetBiosRegex.MatchString(domain) || validWindowsUserDomainDNSRegex.MatchString(domain)) {
				allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, "runAsUserName's Domain doesn't match the NetBios nor the DNS format"))
			}
			if l := len(user); l == 0 {
				allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, "runAsUserName's User cannot be empty"))
			} else if l > maxRunAsUserNameUserLength {
				allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", maxRunAsUserNameUserLength)))
			}
			if invalidUserNameDotsSpacesRegex.MatchString(user) {
				allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, `runAsUserName's User cannot contain only periods or spaces`))
			}
			if invalidUserNameCharsRegex.MatchString(user) {
				allErrs = append(allErrs, field.Invalid(userPath, opts.RunAsUserName, `runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`))
			}
		}
	}
	return allErrs
}

func validateWindowsHostProcessPod(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	containerCount, hostProcessCount := 0, 0
	var podHostProcess *bool
	if spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil {
		podHostProcess = spec.SecurityContext.WindowsOptions.HostProcess
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, cPath *field.Path) {
		containerCount++
		var ctrHostProcess *bool
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			ctrHostProcess = c.SecurityContext.WindowsOptions.HostProcess
		}
		if podHostProcess != nil && ctrHostProcess != nil && *podHostProcess != *ctrHostProcess {
			allErrs = append(allErrs, field.Invalid(cPath.Child("securityContext", "windowsOptions", "hostProcess"), *ctrHostProcess,
				fmt.Sprintf("pod hostProcess value must be identical if both are specified, was %v", *podHostProcess)))
		}
		switch {
		case ctrHostProcess != nil && *ctrHostProcess:
			hostProcessCount++
		case ctrHostProcess == nil && podHostProcess != nil && *podHostProcess:
			hostProcessCount++
		}
	})
	if hostProcessCount > 0 {
		if hostProcessCount != containerCount {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "If pod contains any hostProcess containers then all containers must be HostProcess containers"))
		}
		if !spec.HostNetwork {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("hostNetwork"), spec.HostNetwork, "hostNetwork must be true if pod contains any hostProcess containers"))
		}
	}
	return allErrs
}

// validateHostUsers forbids host namespaces when the pod runs in its own
// user namespace. The paths are upstream's, capitals included.
func validateHostUsers(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	var allErrs field.ErrorList
	if spec.HostNetwork {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostNetwork"), "when `pod.Spec.HostUsers` is false"))
	}
	if spec.HostPID {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("HostPID"), "when `pod.Spec.HostUsers` is false"))
	}
	if spec.HostIPC {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("HostIPC"), "when `pod.Spec.HostUsers` is false"))
	}
	return allErrs
}

var validOS = sets.New(corev1.Linux, corev1.Windows)

func validateOS(os *corev1.PodOS, fldPath *field.Path) field.ErrorList {
	if len(os.Name) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("name"), "cannot be empty")}
	}
	if !validOS.Has(os.Name) {
		return field.ErrorList{field.NotSupported(fldPath, os.Name, sets.List(validOS))}
	}
	return nil
}

func validateLinux(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("securityContext").Child("windowsOptions"), "windows options cannot be set for a linux pod"))
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, cPath *field.Path) {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			allErrs = append(allErrs, field.Forbidden(cPath.Child("securityContext").Child("windowsOptions"), "windows options cannot be set for a linux pod"))
		}
	})
	return allErrs
}

func validateWindows(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	const msg = "cannot be set for a windows pod"
	scPath := fldPath.Child("securityContext")
	if spec.HostUsers != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostUsers"), msg))
	}
	if spec.HostPID {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostPID"), msg))
	}
	if spec.HostIPC {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("hostIPC"), msg))
	}
	if spec.ShareProcessNamespace != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("shareProcessNamespace"), msg))
	}
	if sc := spec.SecurityContext; sc != nil {
		if sc.AppArmorProfile != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("appArmorProfile"), msg))
		}
		if sc.SELinuxOptions != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("seLinuxOptions"), msg))
		}
		if sc.SeccompProfile != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("seccompProfile"), msg))
		}
		if sc.FSGroup != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("fsGroup"), msg))
		}
		if sc.FSGroupChangePolicy != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("fsGroupChangePolicy"), msg))
		}
		if len(sc.Sysctls) > 0 {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("sysctls"), msg))
		}
		if sc.RunAsUser != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("runAsUser"), msg))
		}
		if sc.RunAsGroup != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("runAsGroup"), msg))
		}
		if sc.SupplementalGroups != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("supplementalGroups"), msg))
		}
		if sc.SupplementalGroupsPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("supplementalGroupsPolicy"), msg))
		}
		if sc.SELinuxChangePolicy != nil {
			allErrs = append(allErrs, field.Forbidden(scPath.Child("seLinuxChangePolicy"), msg))
		}
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, cPath *field.Path) {
		sc := c.SecurityContext
		if sc == nil {
			return
		}
		p := cPath.Child("securityContext")
		for _, f := range []struct {
			set  bool
			name string
		}{
			{sc.AppArmorProfile != nil, "appArmorProfile"},
			{sc.SELinuxOptions != nil, "seLinuxOptions"},
			{sc.SeccompProfile != nil, "seccompProfile"},
			{sc.Capabilities != nil, "capabilities"},
			{sc.ReadOnlyRootFilesystem != nil, "readOnlyRootFilesystem"},
			{sc.Privileged != nil, "privileged"},
			{sc.AllowPrivilegeEscalation != nil, "allowPrivilegeEscalation"},
			{sc.ProcMount != nil, "procMount"},
			{sc.RunAsUser != nil, "runAsUser"},
			{sc.RunAsGroup != nil, "runAsGroup"},
		} {
			if f.set {
				allErrs = append(allErrs, field.Forbidden(p.Child(f.name), msg))
			}
		}
	})
	return allErrs
}
