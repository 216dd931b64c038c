package validation

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	iscsiInitiatorIqnRegex = regexp.MustCompile(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`)
	iscsiInitiatorEuiRegex = regexp.MustCompile(`^eui.[[:alnum:]]{16}$`)
	iscsiInitiatorNaaRegex = regexp.MustCompile(`^naa.[[:alnum:]]{32}$`)
)

// validateVolumes validates the pod's volumes and returns the valid ones by
// name, for the volume mount checks.
func validateVolumes(volumes []corev1.Volume, podMeta *metav1.ObjectMeta, fldPath *field.Path, opts podValidationOptions) (map[string]*corev1.VolumeSource, field.ErrorList) {
	var allErrs field.ErrorList
	createdPVCs := sets.New[string]()
	if podMeta != nil && podMeta.Name != "" {
		for _, vol := range volumes {
			if vol.Ephemeral != nil {
				createdPVCs.Insert(podMeta.Name + "-" + vol.Name)
			}
		}
	}
	// The valid volumes by name, pointing into volumes: a map of the
	// sources themselves (some 30 pointers each) would allocate kilobytes.
	vols := make(map[string]*corev1.VolumeSource, len(volumes))
	for i := range volumes {
		vol := &volumes[i]
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		el := validateVolumeSource(&vol.VolumeSource, idxPath, vol.Name, podMeta, opts)
		if len(vol.Name) == 0 {
			el = append(el, field.Required(namePath, ""))
		} else {
			el = append(el, validateDNS1123Label(vol.Name, namePath)...)
		}
		if _, dup := vols[vol.Name]; dup {
			el = append(el, field.Duplicate(namePath, vol.Name))
		}
		if len(el) == 0 {
			vols[vol.Name] = &vol.VolumeSource
		} else {
			allErrs = append(allErrs, el...)
		}
		if vol.PersistentVolumeClaim != nil && createdPVCs.Has(vol.PersistentVolumeClaim.ClaimName) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("persistentVolumeClaim").Child("claimName"), vol.PersistentVolumeClaim.ClaimName,
				"must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return vols, allErrs
}

// volumeSourceCheck is one kind of volume source: whether it is set, the
// path upstream reports a second source at, and its validation.
type volumeSourceCheck struct {
	name     string
	set      func(*corev1.VolumeSource) bool
	validate func(*volumeArgs) field.ErrorList
}

// volumeArgs is what a volume type's validation reads.
type volumeArgs struct {
	src     *corev1.VolumeSource
	fldPath *field.Path
	volName string
	podMeta *metav1.ObjectMeta
	opts    podValidationOptions
}

// volumeSourceChecks are the volume types, each with its own validation,
// in upstream's order (which decides the field a second type is reported
// under). A table built once, not per volume.
var volumeSourceChecks = []volumeSourceCheck{
	{"emptyDir", func(s *corev1.VolumeSource) bool { return s.EmptyDir != nil }, func(a *volumeArgs) field.ErrorList {
		if a.src.EmptyDir.SizeLimit != nil && a.src.EmptyDir.SizeLimit.Cmp(resource.Quantity{}) < 0 {
			return field.ErrorList{field.Forbidden(a.fldPath.Child("emptyDir").Child("sizeLimit"), "SizeLimit field must be a valid resource quantity")}
		}
		return nil
	}},
	{"hostPath", func(s *corev1.VolumeSource) bool { return s.HostPath != nil }, func(a *volumeArgs) field.ErrorList {
		return validateHostPathVolumeSource(a.src.HostPath, a.fldPath.Child("hostPath"))
	}},
	{"gitRepo", func(s *corev1.VolumeSource) bool { return s.GitRepo != nil }, func(a *volumeArgs) field.ErrorList {
		var errs field.ErrorList
		if len(a.src.GitRepo.Repository) == 0 {
			errs = append(errs, field.Required(a.fldPath.Child("gitRepo").Child("repository"), ""))
		}
		return append(errs, validateLocalDescendingPath(a.src.GitRepo.Directory, a.fldPath.Child("gitRepo").Child("directory"))...)
	}},
	{"gcePersistentDisk", func(s *corev1.VolumeSource) bool { return s.GCEPersistentDisk != nil }, func(a *volumeArgs) field.ErrorList {
		// Upstream reports these under "persistentDisk".
		d := a.src.GCEPersistentDisk
		return validateDisk(a.fldPath.Child("persistentDisk"), "pdName", d.PDName, d.Partition)
	}},
	{"awsElasticBlockStore", func(s *corev1.VolumeSource) bool { return s.AWSElasticBlockStore != nil }, func(a *volumeArgs) field.ErrorList {
		d := a.src.AWSElasticBlockStore
		return validateDisk(a.fldPath.Child("awsElasticBlockStore"), "volumeID", d.VolumeID, d.Partition)
	}},
	{"secret", func(s *corev1.VolumeSource) bool { return s.Secret != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("secret")
		var errs field.ErrorList
		if len(a.src.Secret.SecretName) == 0 {
			errs = append(errs, field.Required(p.Child("secretName"), ""))
		}
		errs = append(errs, validateFileMode(a.src.Secret.DefaultMode, p.Child("defaultMode"))...)
		for j := range a.src.Secret.Items {
			errs = append(errs, validateKeyToPath(&a.src.Secret.Items[j], p.Child("items").Index(j))...)
		}
		return errs
	}},
	{"nfs", func(s *corev1.VolumeSource) bool { return s.NFS != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("nfs")
		var errs field.ErrorList
		if len(a.src.NFS.Server) == 0 {
			errs = append(errs, field.Required(p.Child("server"), ""))
		}
		if len(a.src.NFS.Path) == 0 {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		if !path.IsAbs(a.src.NFS.Path) {
			errs = append(errs, field.Invalid(p.Child("path"), a.src.NFS.Path, "must be an absolute path"))
		}
		return errs
	}},
	{"iscsi", func(s *corev1.VolumeSource) bool { return s.ISCSI != nil }, func(a *volumeArgs) field.ErrorList {
		errs := validateISCSIVolumeSource(a.src.ISCSI, a.fldPath.Child("iscsi"))
		if a.src.ISCSI.InitiatorName != nil && len(a.volName+":"+a.src.ISCSI.TargetPortal) > 64 {
			errs = append(errs, field.Invalid(a.fldPath.Child("name"), a.volName,
				"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
		}
		return errs
	}},
	{"glusterfs", func(s *corev1.VolumeSource) bool { return s.Glusterfs != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("glusterfs")
		var errs field.ErrorList
		if len(a.src.Glusterfs.EndpointsName) == 0 {
			errs = append(errs, field.Required(p.Child("endpoints"), ""))
		}
		if len(a.src.Glusterfs.Path) == 0 {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		return errs
	}},
	{"flocker", func(s *corev1.VolumeSource) bool { return s.Flocker != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("flocker")
		var errs field.ErrorList
		if len(a.src.Flocker.DatasetName) == 0 && len(a.src.Flocker.DatasetUUID) == 0 {
			errs = append(errs, field.Required(p, "one of datasetName and datasetUUID is required"))
		}
		if len(a.src.Flocker.DatasetName) != 0 && len(a.src.Flocker.DatasetUUID) != 0 {
			errs = append(errs, field.Invalid(p, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
		}
		if strings.Contains(a.src.Flocker.DatasetName, "/") {
			errs = append(errs, field.Invalid(p.Child("datasetName"), a.src.Flocker.DatasetName, "must not contain '/'"))
		}
		return errs
	}},
	{"persistentVolumeClaim", func(s *corev1.VolumeSource) bool { return s.PersistentVolumeClaim != nil }, func(a *volumeArgs) field.ErrorList {
		if len(a.src.PersistentVolumeClaim.ClaimName) == 0 {
			return field.ErrorList{field.Required(a.fldPath.Child("persistentVolumeClaim").Child("claimName"), "")}
		}
		return nil
	}},
	{"rbd", func(s *corev1.VolumeSource) bool { return s.RBD != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("rbd")
		var errs field.ErrorList
		if len(a.src.RBD.CephMonitors) == 0 {
			errs = append(errs, field.Required(p.Child("monitors"), ""))
		}
		if len(a.src.RBD.RBDImage) == 0 {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		return errs
	}},
	{"cinder", func(s *corev1.VolumeSource) bool { return s.Cinder != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("cinder")
		var errs field.ErrorList
		if len(a.src.Cinder.VolumeID) == 0 {
			errs = append(errs, field.Required(p.Child("volumeID"), ""))
		}
		if a.src.Cinder.SecretRef != nil && len(a.src.Cinder.SecretRef.Name) == 0 {
			errs = append(errs, field.Required(p.Child("secretRef", "name"), ""))
		}
		return errs
	}},
	{"cephFS", func(s *corev1.VolumeSource) bool { return s.CephFS != nil }, func(a *volumeArgs) field.ErrorList {
		if len(a.src.CephFS.Monitors) == 0 {
			return field.ErrorList{field.Required(a.fldPath.Child("cephfs").Child("monitors"), "")}
		}
		return nil
	}},
	{"quobyte", func(s *corev1.VolumeSource) bool { return s.Quobyte != nil }, func(a *volumeArgs) field.ErrorList {
		return validateQuobyteVolumeSource(a.src.Quobyte, a.fldPath.Child("quobyte"))
	}},
	// Upstream misspells this path.
	{"downwarAPI", func(s *corev1.VolumeSource) bool { return s.DownwardAPI != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("downwardAPI")
		errs := validateFileMode(a.src.DownwardAPI.DefaultMode, p.Child("defaultMode"))
		for j := range a.src.DownwardAPI.Items {
			errs = append(errs, validateDownwardAPIVolumeFile(&a.src.DownwardAPI.Items[j], p)...)
		}
		return errs
	}},
	{"fc", func(s *corev1.VolumeSource) bool { return s.FC != nil }, func(a *volumeArgs) field.ErrorList { return validateFCVolumeSource(a.src.FC, a.fldPath.Child("fc")) }},
	{"flexVolume", func(s *corev1.VolumeSource) bool { return s.FlexVolume != nil }, func(a *volumeArgs) field.ErrorList {
		return validateFlexVolumeSource(a.src.FlexVolume, a.fldPath.Child("flexVolume"))
	}},
	{"configMap", func(s *corev1.VolumeSource) bool { return s.ConfigMap != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("configMap")
		var errs field.ErrorList
		if len(a.src.ConfigMap.Name) == 0 {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		errs = append(errs, validateFileMode(a.src.ConfigMap.DefaultMode, p.Child("defaultMode"))...)
		for j := range a.src.ConfigMap.Items {
			errs = append(errs, validateKeyToPath(&a.src.ConfigMap.Items[j], p.Child("items").Index(j))...)
		}
		return errs
	}},
	{"azureFile", func(s *corev1.VolumeSource) bool { return s.AzureFile != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("azureFile")
		var errs field.ErrorList
		if a.src.AzureFile.SecretName == "" {
			errs = append(errs, field.Required(p.Child("secretName"), ""))
		}
		if a.src.AzureFile.ShareName == "" {
			errs = append(errs, field.Required(p.Child("shareName"), ""))
		}
		return errs
	}},
	{"vsphereVolume", func(s *corev1.VolumeSource) bool { return s.VsphereVolume != nil }, func(a *volumeArgs) field.ErrorList {
		if len(a.src.VsphereVolume.VolumePath) == 0 {
			return field.ErrorList{field.Required(a.fldPath.Child("vsphereVolume").Child("volumePath"), "")}
		}
		return nil
	}},
	{"photonPersistentDisk", func(s *corev1.VolumeSource) bool { return s.PhotonPersistentDisk != nil }, func(a *volumeArgs) field.ErrorList {
		if len(a.src.PhotonPersistentDisk.PdID) == 0 {
			return field.ErrorList{field.Required(a.fldPath.Child("photonPersistentDisk").Child("pdID"), "")}
		}
		return nil
	}},
	{"portworxVolume", func(s *corev1.VolumeSource) bool { return s.PortworxVolume != nil }, func(a *volumeArgs) field.ErrorList {
		if len(a.src.PortworxVolume.VolumeID) == 0 {
			return field.ErrorList{field.Required(a.fldPath.Child("portworxVolume").Child("volumeID"), "")}
		}
		return nil
	}},
	{"azureDisk", func(s *corev1.VolumeSource) bool { return s.AzureDisk != nil }, func(a *volumeArgs) field.ErrorList {
		return validateAzureDisk(a.src.AzureDisk, a.fldPath.Child("azureDisk"))
	}},
	{"storageos", func(s *corev1.VolumeSource) bool { return s.StorageOS != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("storageos")
		var errs field.ErrorList
		if len(a.src.StorageOS.VolumeName) == 0 {
			errs = append(errs, field.Required(p.Child("volumeName"), ""))
		} else {
			errs = append(errs, validateDNS1123Label(a.src.StorageOS.VolumeName, p.Child("volumeName"))...)
		}
		if len(a.src.StorageOS.VolumeNamespace) > 0 {
			errs = append(errs, validateDNS1123Label(a.src.StorageOS.VolumeNamespace, p.Child("volumeNamespace"))...)
		}
		if a.src.StorageOS.SecretRef != nil && len(a.src.StorageOS.SecretRef.Name) == 0 {
			errs = append(errs, field.Required(p.Child("secretRef", "name"), ""))
		}
		return errs
	}},
	{"projected", func(s *corev1.VolumeSource) bool { return s.Projected != nil }, func(a *volumeArgs) field.ErrorList {
		return validateProjectedVolumeSource(a.src.Projected, a.fldPath.Child("projected"), a.opts)
	}},
	{"scaleIO", func(s *corev1.VolumeSource) bool { return s.ScaleIO != nil }, func(a *volumeArgs) field.ErrorList {
		p := a.fldPath.Child("scaleIO")
		var errs field.ErrorList
		if a.src.ScaleIO.Gateway == "" {
			errs = append(errs, field.Required(p.Child("gateway"), ""))
		}
		if a.src.ScaleIO.System == "" {
			errs = append(errs, field.Required(p.Child("system"), ""))
		}
		if a.src.ScaleIO.VolumeName == "" {
			errs = append(errs, field.Required(p.Child("volumeName"), ""))
		}
		return errs
	}},
	{"csi", func(s *corev1.VolumeSource) bool { return s.CSI != nil }, func(a *volumeArgs) field.ErrorList { return validateCSIVolumeSource(a.src.CSI, a.fldPath.Child("csi")) }},
	{"ephemeral", func(s *corev1.VolumeSource) bool { return s.Ephemeral != nil }, func(a *volumeArgs) field.ErrorList {
		errs := validateEphemeralVolumeSource(a.src.Ephemeral, a.fldPath.Child("ephemeral"))
		if a.podMeta != nil && a.podMeta.Name != "" && a.volName != "" {
			pvcName := a.podMeta.Name + "-" + a.volName
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(pvcName, false) {
				errs = append(errs, field.Invalid(a.fldPath.Child("name"), a.volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
			}
		}
		return errs
	}},
	{"image", func(s *corev1.VolumeSource) bool { return s.Image != nil }, func(a *volumeArgs) field.ErrorList {
		var errs field.ErrorList
		if a.opts.ResourceIsPod && len(a.src.Image.Reference) == 0 {
			errs = append(errs, field.Required(a.fldPath.Child("image").Child("reference"), ""))
		}
		return append(errs, validatePullPolicy(a.src.Image.PullPolicy, a.fldPath.Child("image").Child("pullPolicy"))...)
	}},
}

// validateDisk checks a cloud disk volume: its id (under idField) is
// required and its partition is 0-255.
func validateDisk(p *field.Path, idField, id string, partition int32) field.ErrorList {
	var errs field.ErrorList
	if len(id) == 0 {
		errs = append(errs, field.Required(p.Child(idField), ""))
	}
	if partition < 0 || partition > 255 {
		errs = append(errs, field.Invalid(p.Child("partition"), partition, pdPartitionErrorMsg))
	}
	return errs
}

func validateVolumeSource(src *corev1.VolumeSource, fldPath *field.Path, volName string, podMeta *metav1.ObjectMeta, opts podValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	a := &volumeArgs{src: src, fldPath: fldPath, volName: volName, podMeta: podMeta, opts: opts}
	numVolumes := 0
	for _, c := range volumeSourceChecks {
		if !c.set(src) {
			continue
		}
		if numVolumes > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(c.name), "may not specify more than 1 volume type"))
			continue
		}
		numVolumes++
		allErrs = append(allErrs, c.validate(a)...)
	}
	if numVolumes == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a volume type"))
	}
	return allErrs
}

func validateFileMode(mode *int32, fldPath *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(fldPath, *mode, fileModeErrorMsg)}
	}
	return nil
}

var supportedHostPathTypes = sets.New(
	corev1.HostPathUnset,
	corev1.HostPathDirectoryOrCreate,
	corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate,
	corev1.HostPathFile,
	corev1.HostPathSocket,
	corev1.HostPathCharDev,
	corev1.HostPathBlockDev)

func validateHostPathVolumeSource(hp *corev1.HostPathVolumeSource, fldPath *field.Path) field.ErrorList {
	if len(hp.Path) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("path"), "")}
	}
	allErrs := validatePathNoBacksteps(hp.Path, fldPath.Child("path"))
	if hp.Type != nil && !supportedHostPathTypes.Has(*hp.Type) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), *hp.Type, sets.List(supportedHostPathTypes)))
	}
	return allErrs
}

func validateISCSIVolumeSource(iscsi *corev1.ISCSIVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(iscsi.TargetPortal) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("targetPortal"), ""))
	}
	if len(iscsi.IQN) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("iqn"), ""))
	} else {
		allErrs = append(allErrs, validateISCSIName(iscsi.IQN, fldPath.Child("iqn"))...)
	}
	if iscsi.Lun < 0 || iscsi.Lun > 255 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), iscsi.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (iscsi.DiscoveryCHAPAuth || iscsi.SessionCHAPAuth) && iscsi.SecretRef == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("secretRef"), ""))
	}
	if iscsi.InitiatorName != nil {
		allErrs = append(allErrs, validateISCSIName(*iscsi.InitiatorName, fldPath.Child("initiatorname"))...)
	}
	return allErrs
}

func validateISCSIName(name string, fldPath *field.Path) field.ErrorList {
	switch {
	case !strings.HasPrefix(name, "iqn") && !strings.HasPrefix(name, "eui") && !strings.HasPrefix(name, "naa"):
		return field.ErrorList{field.Invalid(fldPath, name, "must be valid format starting with iqn, eui, or naa")}
	case strings.HasPrefix(name, "iqn") && !iscsiInitiatorIqnRegex.MatchString(name),
		strings.HasPrefix(name, "eui") && !iscsiInitiatorEuiRegex.MatchString(name),
		strings.HasPrefix(name, "naa") && !iscsiInitiatorNaaRegex.MatchString(name):
		return field.ErrorList{field.Invalid(fldPath, name, "must be valid format")}
	}
	return nil
}

func validateQuobyteVolumeSource(q *corev1.QuobyteVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case len(q.Registry) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("registry"), "must be a host:port pair or multiple pairs separated by commas"))
	case len(q.Tenant) >= 65:
		allErrs = append(allErrs, field.Required(fldPath.Child("tenant"), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, hostPort := range strings.Split(q.Registry, ",") {
			if _, _, err := net.SplitHostPort(hostPort); err != nil {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("registry"), q.Registry, "must be a host:port pair or multiple pairs separated by commas"))
			}
		}
	}
	if len(q.Volume) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("volume"), ""))
	}
	return allErrs
}

func validateFCVolumeSource(fc *corev1.FCVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(fc.TargetWWNs) < 1 && len(fc.WWIDs) < 1 {
		allErrs = append(allErrs, field.Required(fldPath.Child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
	}
	if len(fc.TargetWWNs) != 0 && len(fc.WWIDs) != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("targetWWNs"), fc.TargetWWNs, "targetWWNs and wwids can not be specified simultaneously"))
	}
	if len(fc.TargetWWNs) != 0 {
		if fc.Lun == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("lun"), "lun is required if targetWWNs is specified"))
		} else if *fc.Lun < 0 || *fc.Lun > 255 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("lun"), fc.Lun, validation.InclusiveRangeError(0, 255)))
		}
	}
	return allErrs
}

func validateFlexVolumeSource(fv *corev1.FlexVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(fv.Driver) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("driver"), ""))
	}
	for _, k := range sets.List(sets.KeySet(fv.Options)) {
		namespace := k
		if parts := strings.SplitN(k, "/", 2); len(parts) == 2 {
			namespace = parts[0]
		}
		normalized := "." + strings.ToLower(namespace)
		if strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return allErrs
}

func validateAzureDisk(azure *corev1.AzureDiskVolumeSource, fldPath *field.Path) field.ErrorList {
	cachingModes := sets.New(corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite)
	diskKinds := sets.New(corev1.AzureSharedBlobDisk, corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk)
	var allErrs field.ErrorList
	if azure.DiskName == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("diskName"), ""))
	}
	if azure.DataDiskURI == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("diskURI"), ""))
	}
	if azure.CachingMode != nil && !cachingModes.Has(*azure.CachingMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("cachingMode"), *azure.CachingMode, sets.List(cachingModes)))
	}
	if azure.Kind != nil && !diskKinds.Has(*azure.Kind) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), *azure.Kind, sets.List(diskKinds)))
	}
	if azure.Kind != nil && *azure.Kind == corev1.AzureManagedDisk && !strings.HasPrefix(azure.DataDiskURI, "/subscriptions/") {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("diskURI"), azure.DataDiskURI,
			[]string{"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"}))
	}
	if azure.Kind != nil && *azure.Kind != corev1.AzureManagedDisk && !strings.HasPrefix(azure.DataDiskURI, "https://") {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("diskURI"), azure.DataDiskURI,
			[]string{"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"}))
	}
	return allErrs
}

func validateCSIVolumeSource(csi *corev1.CSIVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateCSIDriverName(csi.Driver, fldPath.Child("driver"))
	if csi.NodePublishSecretRef != nil {
		if len(csi.NodePublishSecretRef.Name) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("nodePublishSecretRef", "name"), ""))
		} else {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(csi.NodePublishSecretRef.Name, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), csi.NodePublishSecretRef.Name, msg))
			}
		}
	}
	return allErrs
}

func validateCSIDriverName(driverName string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(driverName) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	if len(driverName) > 63 {
		allErrs = append(allErrs, field.TooLong(fldPath, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(driverName)) {
		allErrs = append(allErrs, field.Invalid(fldPath, driverName, msg))
	}
	return allErrs
}

var (
	supportedAccessModes = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	supportedVolumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
)

func validateEphemeralVolumeSource(eph *corev1.EphemeralVolumeSource, fldPath *field.Path) field.ErrorList {
	if eph.VolumeClaimTemplate == nil {
		return field.ErrorList{field.Required(fldPath.Child("volumeClaimTemplate"), "")}
	}
	tmplPath := fldPath.Child("volumeClaimTemplate")
	allErrs := validateTemplateObjectMeta(&eph.VolumeClaimTemplate.ObjectMeta, tmplPath.Child("metadata"))
	allErrs = append(allErrs, validatePersistentVolumeClaimSpec(&eph.VolumeClaimTemplate.Spec, tmplPath.Child("spec"))...)
	return allErrs
}

// validateTemplateObjectMeta allows only labels and annotations in an
// embedded object's metadata.
func validateTemplateObjectMeta(meta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateAnnotations(meta.Annotations, fldPath.Child("annotations"))
	allErrs = append(allErrs, metav1validation.ValidateLabels(meta.Labels, fldPath.Child("labels"))...)
	allErrs = append(allErrs, validateFieldAllowList(*meta, map[string]bool{"Annotations": true, "Labels": true}, "cannot be set", fldPath)...)
	return allErrs
}

func validatePersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("accessModes"), "at least 1 access mode is required"))
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	foundRWOP, foundOther := false, false
	for _, mode := range spec.AccessModes {
		if !supportedAccessModes.Has(mode) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("accessModes"), mode, sets.List(supportedAccessModes)))
		}
		if mode == corev1.ReadWriteOncePod {
			foundRWOP = true
		} else if supportedAccessModes.Has(mode) {
			foundOther = true
		}
	}
	if foundRWOP && foundOther {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if storage, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if storage.Cmp(resource.Quantity{}) <= 0 {
		allErrs = append(allErrs, field.Invalid(storagePath, storage.String(), isNotPositiveErrorMsg))
	} else {
		allErrs = append(allErrs, validateResourceQuantityValue(corev1.ResourceStorage, storage, storagePath)...)
	}
	if spec.StorageClassName != nil && len(*spec.StorageClassName) > 0 {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*spec.StorageClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("storageClassName"), *spec.StorageClassName, msg))
		}
	}
	if spec.VolumeMode != nil && !supportedVolumeModes.Has(*spec.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *spec.VolumeMode, sets.List(supportedVolumeModes)))
	}
	return allErrs
}

func validateKeyToPath(kp *corev1.KeyToPath, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(kp.Key) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	}
	if len(kp.Path) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(kp.Path, fldPath.Child("path"))...)
	allErrs = append(allErrs, validateFileMode(kp.Mode, fldPath.Child("mode"))...)
	return allErrs
}

func validateDownwardAPIVolumeFile(file *corev1.DownwardAPIVolumeFile, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(file.Path) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(file.Path, fldPath.Child("path"))...)
	switch {
	case file.FieldRef != nil:
		allErrs = append(allErrs, validateObjectFieldSelector(file.FieldRef, validVolumeDownwardAPIFieldPathExpressions, fldPath.Child("fieldRef"))...)
		if file.ResourceFieldRef != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case file.ResourceFieldRef != nil:
		allErrs = append(allErrs, validateContainerResourceFieldSelector(file.ResourceFieldRef, fldPath.Child("resourceFieldRef"), true)...)
	default:
		allErrs = append(allErrs, field.Required(fldPath, "one of fieldRef and resourceFieldRef is required"))
	}
	allErrs = append(allErrs, validateFileMode(file.Mode, fldPath.Child("mode"))...)
	return allErrs
}

func validateProjectedVolumeSource(projection *corev1.ProjectedVolumeSource, fldPath *field.Path, opts podValidationOptions) field.ErrorList {
	allErrs := validateFileMode(projection.DefaultMode, fldPath.Child("defaultMode"))
	allPaths := sets.New[string]()
	addPath := func(p string, value interface{}) {
		if len(p) == 0 {
			return
		}
		if allPaths.Has(p) {
			allErrs = append(allErrs, field.Invalid(fldPath, value, "conflicting duplicate paths"))
		} else {
			allPaths.Insert(p)
		}
	}
	for i := range projection.Sources {
		source := &projection.Sources[i]
		numSources := 0
		srcPath := fldPath.Child("sources").Index(i)
		if s := source.Secret; s != nil {
			numSources++
			p := srcPath.Child("secret")
			if len(s.Name) == 0 {
				allErrs = append(allErrs, field.Required(p.Child("name"), ""))
			}
			for j := range s.Items {
				allErrs = append(allErrs, validateKeyToPath(&s.Items[j], p.Child("items").Index(j))...)
				addPath(s.Items[j].Path, s.Name)
			}
		}
		if c := source.ConfigMap; c != nil {
			numSources++
			p := srcPath.Child("configMap")
			if len(c.Name) == 0 {
				allErrs = append(allErrs, field.Required(p.Child("name"), ""))
			}
			for j := range c.Items {
				allErrs = append(allErrs, validateKeyToPath(&c.Items[j], p.Child("items").Index(j))...)
				addPath(c.Items[j].Path, c.Name)
			}
		}
		if d := source.DownwardAPI; d != nil {
			numSources++
			p := srcPath.Child("downwardAPI")
			for j := range d.Items {
				allErrs = append(allErrs, validateDownwardAPIVolumeFile(&d.Items[j], p)...)
				addPath(d.Items[j].Path, d.Items[j].Path)
			}
		}
		if t := source.ServiceAccountToken; t != nil {
			numSources++
			p := srcPath.Child("serviceAccountToken")
			expiration := int64(0)
			if t.ExpirationSeconds != nil {
				expiration = *t.ExpirationSeconds
			}
			if expiration < 10*60 {
				allErrs = append(allErrs, field.Invalid(p.Child("expirationSeconds"), expiration, "may not specify a duration less than 10 minutes"))
			}
			if expiration > 1<<32 {
				allErrs = append(allErrs, field.Invalid(p.Child("expirationSeconds"), expiration, "may not specify a duration larger than 2^32 seconds"))
			}
			if t.Path == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
			} else if !opts.AllowNonLocalProjectedTokenPath {
				allErrs = append(allErrs, validateLocalNonReservedPath(t.Path, fldPath.Child("path"))...)
			}
		}
		if b := source.ClusterTrustBundle; b != nil {
			numSources++
			p := srcPath.Child("clusterTrustBundle")
			usingName, usingSigner := b.Name != nil, b.SignerName != nil
			switch {
			case usingName && usingSigner:
				allErrs = append(allErrs, field.Invalid(p, b, "only one of name and signerName may be used"))
			case usingName:
				if *b.Name == "" {
					allErrs = append(allErrs, field.Required(p.Child("name"), "must be a valid object name"))
				}
				if b.LabelSelector != nil {
					allErrs = append(allErrs, field.Invalid(p.Child("labelSelector"), b.LabelSelector, "labelSelector must be unset if name is specified"))
				}
			case usingSigner:
				if *b.SignerName == "" {
					allErrs = append(allErrs, field.Required(p.Child("signerName"), "must be a valid signer name"))
				}
				allErrs = append(allErrs, metav1validation.ValidateLabelSelector(b.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
			default:
				allErrs = append(allErrs, field.Required(p, "either name or signerName must be specified"))
			}
			if b.Path == "" {
				allErrs = append(allErrs, field.Required(p.Child("path"), ""))
			}
			allErrs = append(allErrs, validateLocalNonReservedPath(b.Path, p.Child("path"))...)
			if allPaths.Has(b.Path) {
				allErrs = append(allErrs, field.Invalid(fldPath, b.Path, "conflicting duplicate paths"))
			} else {
				allPaths.Insert(b.Path)
			}
		}
		if numSources > 1 {
			allErrs = append(allErrs, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
	}
	return allErrs
}

// Volume mounts and devices.

var supportedMountPropagations = sets.New(
	corev1.MountPropagationBidirectional,
	corev1.MountPropagationHostToContainer,
	corev1.MountPropagationNone)

func validateVolumeMounts(mounts []corev1.VolumeMount, volDevices map[string]string, volumes map[string]*corev1.VolumeSource, container *corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mountpoints := sets.New[string]()
	for i, mnt := range mounts {
		idxPath := fldPath.Index(i)
		if len(mnt.Name) == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		}
		if _, ok := volumes[mnt.Name]; !ok {
			allErrs = append(allErrs, field.NotFound(idxPath.Child("name"), mnt.Name))
		}
		if len(mnt.MountPath) == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("mountPath"), ""))
		}
		if mountpoints.Has(mnt.MountPath) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("mountPath"), mnt.MountPath, "must be unique"))
		}
		mountpoints.Insert(mnt.MountPath)
		if _, ok := volDevices[mnt.Name]; ok {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), mnt.Name, "must not already exist in volumeDevices"))
		}
		for _, devPath := range volDevices {
			if devPath == mnt.MountPath {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("mountPath"), mnt.MountPath, "must not already exist as a path in volumeDevices"))
				break
			}
		}
		if v, ok := volumes[mnt.Name]; ok && v.Image != nil {
			if len(mnt.SubPath) != 0 {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("subPath"), mnt.SubPath, "not allowed in image volume sources"))
			}
			if len(mnt.SubPathExpr) != 0 {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("subPathExpr"), mnt.SubPathExpr, "not allowed in image volume sources"))
			}
		}
		// Upstream reports these three under the list path, not the item.
		if len(mnt.SubPath) > 0 {
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPath, fldPath.Child("subPath"))...)
		}
		if len(mnt.SubPathExpr) > 0 {
			if len(mnt.SubPath) > 0 {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("subPathExpr"), mnt.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			allErrs = append(allErrs, validateLocalDescendingPath(mnt.SubPathExpr, fldPath.Child("subPathExpr"))...)
		}
		if mnt.MountPropagation != nil {
			propPath := fldPath.Child("mountPropagation")
			if !supportedMountPropagations.Has(*mnt.MountPropagation) {
				allErrs = append(allErrs, field.NotSupported(propPath, *mnt.MountPropagation, sets.List(supportedMountPropagations)))
			}
			privileged := container.SecurityContext != nil && container.SecurityContext.Privileged != nil && *container.SecurityContext.Privileged
			if *mnt.MountPropagation == corev1.MountPropagationBidirectional && !privileged {
				allErrs = append(allErrs, field.Forbidden(propPath, "Bidirectional mount propagation is available only to privileged containers"))
			}
		}
		allErrs = append(allErrs, validateMountRecursiveReadOnly(mnt, fldPath.Child("recursiveReadOnly"))...)
	}
	return allErrs
}

func validateMountRecursiveReadOnly(mnt corev1.VolumeMount, fldPath *field.Path) field.ErrorList {
	if mnt.RecursiveReadOnly == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch *mnt.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !mnt.ReadOnly {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when readOnly is true"))
		}
		if mnt.MountPropagation != nil && *mnt.MountPropagation != corev1.MountPropagationNone {
			allErrs = append(allErrs, field.Forbidden(fldPath, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		valid := sets.New(corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyIfPossible, corev1.RecursiveReadOnlyEnabled)
		allErrs = append(allErrs, field.NotSupported(fldPath, *mnt.RecursiveReadOnly, sets.List(valid)))
	}
	return allErrs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, volMounts map[string]string, volumes map[string]*corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	devicePaths := sets.New[string]()
	deviceNames := sets.New[string]()
	for i, dev := range devices {
		idxPath := fldPath.Index(i)
		src, didMatch := volumes[dev.Name]
		isPVC := didMatch && (src.PersistentVolumeClaim != nil || src.Ephemeral != nil)
		if len(dev.Name) == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), ""))
		}
		if deviceNames.Has(dev.Name) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), dev.Name, "must be unique"))
		}
		if didMatch && !isPVC {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), dev.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !didMatch {
			allErrs = append(allErrs, field.NotFound(idxPath.Child("name"), dev.Name))
		}
		if len(dev.DevicePath) == 0 {
			allErrs = append(allErrs, field.Required(idxPath.Child("devicePath"), ""))
		}
		if devicePaths.Has(dev.DevicePath) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("devicePath"), dev.DevicePath, "must be unique"))
		}
		if len(dev.DevicePath) > 0 && len(validatePathNoBacksteps(dev.DevicePath, fldPath.Child("devicePath"))) > 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("devicePath"), dev.DevicePath, "can not contain backsteps ('..')"))
		} else {
			devicePaths.Insert(dev.DevicePath)
		}
		if _, ok := volMounts[dev.Name]; ok {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), dev.Name, "must not already exist in volumeMounts"))
		}
		for _, mountPath := range volMounts {
			if mountPath == dev.DevicePath {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("devicePath"), dev.DevicePath, "must not already exist as a path in volumeMounts"))
				break
			}
		}
		if len(dev.Name) > 0 {
			deviceNames.Insert(dev.Name)
		}
	}
	return allErrs
}
