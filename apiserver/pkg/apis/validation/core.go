package validation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ValidateNamespace validates a Namespace on create.
func ValidateNamespace(ns *corev1.Namespace) field.ErrorList {
	allErrs := validateObjectMeta(&ns.ObjectMeta, false, apimachineryvalidation.ValidateNamespaceName, metadataPath)
	for i := range ns.Spec.Finalizers {
		// Upstream reports these without the index.
		allErrs = append(allErrs, validateFinalizerName(string(ns.Spec.Finalizers[i]), field.NewPath("spec", "finalizers"))...)
	}
	return allErrs
}

// ValidateNamespaceUpdate validates an update of a Namespace. Spec and status
// changes are the business of the finalize and status subresources.
func ValidateNamespaceUpdate(ns, oldNs *corev1.Namespace) field.ErrorList {
	return validateObjectMetaUpdate(&ns.ObjectMeta, &oldNs.ObjectMeta, metadataPath)
}

// ValidateNamespaceStatusUpdate validates an update of a Namespace's status.
func ValidateNamespaceStatusUpdate(ns, oldNs *corev1.Namespace) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ns.ObjectMeta, &oldNs.ObjectMeta, metadataPath)
	phasePath := field.NewPath("status", "Phase")
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			allErrs = append(allErrs, field.Invalid(phasePath, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		allErrs = append(allErrs, field.Invalid(phasePath, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return allErrs
}

// ValidateNamespaceFinalizeUpdate validates an update through the finalize
// subresource.
func ValidateNamespaceFinalizeUpdate(ns, oldNs *corev1.Namespace) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ns.ObjectMeta, &oldNs.ObjectMeta, metadataPath)
	for i := range ns.Spec.Finalizers {
		allErrs = append(allErrs, validateFinalizerName(string(ns.Spec.Finalizers[i]), field.NewPath("spec", "finalizers").Index(i))...)
	}
	return allErrs
}

// nodePodCIDRs is what the internal node would hold: podCIDRs, or podCIDR
// when it is set and differs.
func nodePodCIDRs(spec *corev1.NodeSpec) []string {
	if spec.PodCIDR != "" && (len(spec.PodCIDRs) == 0 || spec.PodCIDRs[0] != spec.PodCIDR) {
		return []string{spec.PodCIDR}
	}
	return spec.PodCIDRs
}

// ValidateNode validates a Node on create.
func ValidateNode(node *corev1.Node) field.ErrorList {
	allErrs := validateObjectMeta(&node.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if len(node.Spec.Taints) > 0 {
		// Upstream reports taints under metadata.
		allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, metadataPath.Child("taints"))...)
	}
	allErrs = append(allErrs, validateNodeResources(node)...)
	if cidrs := nodePodCIDRs(&node.Spec); len(cidrs) > 0 {
		cidrsPath := field.NewPath("spec", "podCIDRs")
		for i, value := range cidrs {
			allErrs = append(allErrs, validation.IsValidCIDR(cidrsPath.Index(i), value)...)
		}
		if len(cidrs) > 1 {
			dualStack, err := netutils.IsDualStackCIDRStrings(cidrs)
			if err != nil {
				allErrs = append(allErrs, field.InternalError(cidrsPath, fmt.Errorf("invalid PodCIDRs. failed to check with dual stack with error:%v", err)))
			}
			if !dualStack || len(cidrs) > 2 {
				allErrs = append(allErrs, field.Invalid(cidrsPath, cidrs, "may specify no more than one CIDR for each IP family"))
			}
			seen := sets.New[string]()
			for i, value := range cidrs {
				if seen.Has(value) {
					allErrs = append(allErrs, field.Duplicate(cidrsPath.Index(i), value))
				}
				seen.Insert(value)
			}
		}
	}
	return allErrs
}

// ValidateNodeUpdate validates an update of a Node: podCIDRs and providerID
// may only be set once, externalID never changes.
func ValidateNodeUpdate(node, oldNode *corev1.Node) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&node.ObjectMeta, &oldNode.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateNodeResources(node)...)
	addresses := map[corev1.NodeAddress]bool{}
	for i, addr := range node.Status.Addresses {
		if addresses[addr] {
			allErrs = append(allErrs, field.Duplicate(field.NewPath("status", "addresses").Index(i), addr))
		}
		addresses[addr] = true
	}
	oldCIDRs, newCIDRs := nodePodCIDRs(&oldNode.Spec), nodePodCIDRs(&node.Spec)
	if len(oldCIDRs) > 0 {
		const msg = "node updates may not change podCIDR except from \"\" to valid"
		if len(oldCIDRs) != len(newCIDRs) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), msg))
		} else {
			for i, value := range oldCIDRs {
				if value != newCIDRs[i] {
					allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), msg))
				}
			}
		}
	}
	if len(oldNode.Spec.ProviderID) > 0 && oldNode.Spec.ProviderID != node.Spec.ProviderID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	if node.Spec.ConfigSource != nil {
		allErrs = append(allErrs, validateNodeConfigSource(node.Spec.ConfigSource, field.NewPath("spec", "configSource"), true)...)
	}
	if cfg := node.Status.Config; cfg != nil {
		statusPath := field.NewPath("status", "config")
		for _, s := range []struct {
			src  *corev1.NodeConfigSource
			name string
		}{{cfg.Assigned, "assigned"}, {cfg.Active, "active"}, {cfg.LastKnownGood, "lastKnownGood"}} {
			if s.src != nil {
				allErrs = append(allErrs, validateNodeConfigSource(s.src, statusPath.Child(s.name), false)...)
			}
		}
	}
	if len(node.Spec.Taints) > 0 {
		allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, metadataPath.Child("taints"))...)
	}
	if node.Spec.DoNotUseExternalID != oldNode.Spec.DoNotUseExternalID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return allErrs
}

// validateNodeConfigSource validates the deprecated dynamic kubelet config
// reference, kept for compatibility.
func validateNodeConfigSource(src *corev1.NodeConfigSource, fldPath *field.Path, inSpec bool) field.ErrorList {
	var allErrs field.ErrorList
	if src.ConfigMap == nil {
		return field.ErrorList{field.Invalid(fldPath, src, "exactly one reference subfield must be non-nil")}
	}
	cm := src.ConfigMap
	p := fldPath.Child("configMap")
	if inSpec {
		if string(cm.UID) != "" {
			allErrs = append(allErrs, field.Forbidden(p.Child("uid"), "uid must not be set in spec"))
		}
		if cm.ResourceVersion != "" {
			allErrs = append(allErrs, field.Forbidden(p.Child("resourceVersion"), "resourceVersion must not be set in spec"))
		}
	} else {
		if string(cm.UID) == "" {
			allErrs = append(allErrs, field.Required(p.Child("uid"), "uid must be set in status"))
		}
		if cm.ResourceVersion == "" {
			allErrs = append(allErrs, field.Required(p.Child("resourceVersion"), "resourceVersion must be set in status"))
		}
	}
	if cm.Namespace == "" {
		allErrs = append(allErrs, field.Required(p.Child("namespace"), "namespace must be set"))
	} else {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(cm.Namespace, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("namespace"), cm.Namespace, msg))
		}
	}
	if cm.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), "name must be set"))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(cm.Name, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), cm.Name, msg))
		}
	}
	if cm.KubeletConfigKey == "" {
		allErrs = append(allErrs, field.Required(p.Child("kubeletConfigKey"), "kubeletConfigKey must be set"))
	} else {
		for _, msg := range validation.IsConfigMapKey(cm.KubeletConfigKey) {
			allErrs = append(allErrs, field.Invalid(p.Child("kubeletConfigKey"), cm.KubeletConfigKey, msg))
		}
	}
	return allErrs
}

func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, taint := range taints {
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, metav1validation.ValidateLabelName(taint.Key, idxPath.Child("key"))...)
		if errs := validation.IsValidLabelValue(taint.Value); len(errs) != 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("value"), taint.Value, strings.Join(errs, ";")))
		}
		allErrs = append(allErrs, validateTaintEffect(taint.Effect, false, idxPath.Child("effect"))...)
		if unique[taint.Effect].Has(taint.Key) {
			dup := field.Duplicate(idxPath, taint)
			dup.Detail = "taints must be unique by key and effect pair"
			allErrs = append(allErrs, dup)
			continue
		}
		if unique[taint.Effect] == nil {
			unique[taint.Effect] = sets.New[string]()
		}
		unique[taint.Effect].Insert(taint.Key)
	}
	return allErrs
}

// validateNodeResources checks capacity and allocatable quantities. Upstream
// uses the resource name as a path child, not a key.
func validateNodeResources(node *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sets.List(sets.KeySet(node.Status.Capacity)) {
		allErrs = append(allErrs, validateResourceQuantityValue(name, node.Status.Capacity[name], field.NewPath("status", "capacity", string(name)))...)
	}
	for _, name := range sets.List(sets.KeySet(node.Status.Allocatable)) {
		allErrs = append(allErrs, validateResourceQuantityValue(name, node.Status.Allocatable[name], field.NewPath("status", "allocatable", string(name)))...)
	}
	return allErrs
}

// ValidateConfigMap validates a ConfigMap on create.
func ValidateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	allErrs := validateObjectMeta(&cm.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	totalSize := 0
	for _, key := range sets.List(sets.KeySet(cm.Data)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("data").Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			allErrs = append(allErrs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
		}
		totalSize += len(cm.Data[key])
	}
	for _, key := range sets.List(sets.KeySet(cm.BinaryData)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
		}
		totalSize += len(cm.BinaryData[key])
	}
	if totalSize > corev1.MaxSecretSize {
		// The error refers to the whole object.
		allErrs = append(allErrs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return allErrs
}

// ValidateConfigMapUpdate validates an update of a ConfigMap: an immutable
// ConfigMap keeps its data, binaryData and immutable flag.
func ValidateConfigMapUpdate(cm, oldCM *corev1.ConfigMap) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&cm.ObjectMeta, &oldCM.ObjectMeta, metadataPath)
	if oldCM.Immutable != nil && *oldCM.Immutable {
		if cm.Immutable == nil || !*cm.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(cm.Data, oldCM.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(cm.BinaryData, oldCM.BinaryData) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, ValidateConfigMap(cm)...)
}

// secretData is what the internal secret would hold: data with stringData
// merged over it.
func secretData(s *corev1.Secret) map[string][]byte {
	if len(s.StringData) == 0 {
		return s.Data
	}
	data := make(map[string][]byte, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		data[k] = v
	}
	for k, v := range s.StringData {
		data[k] = []byte(v)
	}
	return data
}

// ValidateSecret validates a Secret on create.
func ValidateSecret(s *corev1.Secret) field.ErrorList {
	allErrs := validateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	data := secretData(s)
	dataPath := field.NewPath("data")
	totalSize := 0
	for _, key := range sets.List(sets.KeySet(data)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), key, msg))
		}
		totalSize += len(data[key])
	}
	if totalSize > corev1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}

	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		// Only the service account name is required; a controller adds the rest.
		if len(s.Annotations[corev1.ServiceAccountNameKey]) == 0 {
			allErrs = append(allErrs, field.Required(metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeOpaque, "":
	case corev1.SecretTypeDockercfg:
		allErrs = append(allErrs, validateSecretJSONKey(data, corev1.DockerConfigKey, dataPath)...)
	case corev1.SecretTypeDockerConfigJson:
		allErrs = append(allErrs, validateSecretJSONKey(data, corev1.DockerConfigJsonKey, dataPath)...)
	case corev1.SecretTypeBasicAuth:
		_, hasUser := data[corev1.BasicAuthUsernameKey]
		_, hasPassword := data[corev1.BasicAuthPasswordKey]
		if !hasUser && !hasPassword {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""))
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(data[corev1.SSHAuthPrivateKey]) == 0 {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if _, ok := data[corev1.TLSCertKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSCertKey), ""))
		}
		if _, ok := data[corev1.TLSPrivateKeyKey]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return allErrs
}

// validateSecretJSONKey requires data[key] to exist and hold a JSON object.
func validateSecretJSONKey(data map[string][]byte, key string, dataPath *field.Path) field.ErrorList {
	raw, ok := data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	if err := json.Unmarshal(raw, &map[string]interface{}{}); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

// ValidateSecretUpdate validates an update of a Secret: the type never
// changes, and an immutable Secret keeps its data and immutable flag.
func ValidateSecretUpdate(s, oldS *corev1.Secret) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&s.ObjectMeta, &oldS.ObjectMeta, metadataPath)
	newType, oldType := s.Type, oldS.Type
	if newType == "" {
		newType = corev1.SecretTypeOpaque
	}
	if oldType == "" {
		oldType = corev1.SecretTypeOpaque
	}
	allErrs = append(allErrs, validateImmutableField(newType, oldType, field.NewPath("type"))...)
	if oldS.Immutable != nil && *oldS.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(secretData(s), secretData(oldS)) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, ValidateSecret(s)...)
}

// ValidateServiceAccount validates a ServiceAccount on create.
func ValidateServiceAccount(sa *corev1.ServiceAccount) field.ErrorList {
	return validateObjectMeta(&sa.ObjectMeta, true, apimachineryvalidation.ValidateServiceAccountName, metadataPath)
}

// ValidateServiceAccountUpdate validates an update of a ServiceAccount.
func ValidateServiceAccountUpdate(sa, oldSA *corev1.ServiceAccount) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&sa.ObjectMeta, &oldSA.ObjectMeta, metadataPath)
	return append(allErrs, ValidateServiceAccount(sa)...)
}

// Limits on the fields of an Event created with eventTime set.
const (
	eventReportingInstanceLengthLimit = 128
	eventActionLengthLimit            = 128
	eventReasonLengthLimit            = 128
	eventNoteLengthLimit              = 1024
)

// ValidateEvent validates a core/v1 Event, on create and on update. Upstream
// applies only its "legacy" rules to core/v1 events, for compatibility with
// old clients: no object meta validation, and no immutable fields.
func ValidateEvent(event *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	if event.EventTime.Time.Equal(time.Time{}) {
		if len(event.InvolvedObject.Namespace) == 0 {
			// Empty, or "default" for compatibility with old clients.
			if event.Namespace != metav1.NamespaceNone && event.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(nsPath, event.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if event.Namespace != event.InvolvedObject.Namespace {
			allErrs = append(allErrs, field.Invalid(nsPath, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if len(event.InvolvedObject.Namespace) == 0 && event.Namespace != metav1.NamespaceDefault && event.Namespace != metav1.NamespaceSystem {
			allErrs = append(allErrs, field.Invalid(nsPath, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		if len(event.ReportingController) == 0 {
			allErrs = append(allErrs, field.Required(field.NewPath("reportingController"), ""))
		}
		allErrs = append(allErrs, validateQualifiedName(event.ReportingController, field.NewPath("reportingController"))...)
		if len(event.ReportingInstance) == 0 {
			allErrs = append(allErrs, field.Required(field.NewPath("reportingInstance"), ""))
		}
		if len(event.ReportingInstance) > eventReportingInstanceLengthLimit {
			allErrs = append(allErrs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", eventReportingInstanceLengthLimit)))
		}
		if len(event.Action) == 0 {
			allErrs = append(allErrs, field.Required(field.NewPath("action"), ""))
		}
		if len(event.Action) > eventActionLengthLimit {
			allErrs = append(allErrs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", eventActionLengthLimit)))
		}
		if len(event.Reason) == 0 {
			allErrs = append(allErrs, field.Required(field.NewPath("reason"), ""))
		}
		if len(event.Reason) > eventReasonLengthLimit {
			allErrs = append(allErrs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", eventReasonLengthLimit)))
		}
		if len(event.Message) > eventNoteLengthLimit {
			allErrs = append(allErrs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", eventNoteLengthLimit)))
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(event.Namespace) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("namespace"), event.Namespace, msg))
	}
	return allErrs
}
