package validation

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Quick checks. Each tells, without building a field path or an error,
// that its validator would find nothing wrong with a common, valid value
// (the projected volume the ServiceAccount admission plugin adds to every
// pod, and its mounts), so that the validator, which builds a field path
// for every field it visits, runs only where the quick check says no or
// cannot tell. The errors are therefore always the validator's own. A
// quick check must never accept what its validator rejects; the tests run
// every validation with and without them (quickChecks) and compare.

// quickChecks turns the quick checks on; tests turn them off to compare.
var quickChecks = true

// localPathOK: validateLocalNonReservedPath finds nothing wrong with p.
func localPathOK(p string) bool {
	if path.IsAbs(p) || (strings.HasPrefix(p, "..") && !strings.HasPrefix(p, "../")) {
		return false
	}
	return noBacksteps(p)
}

// noBacksteps: p has no ".." element.
func noBacksteps(p string) bool {
	for item := range strings.SplitSeq(p, "/") {
		if item == ".." {
			return false
		}
	}
	return true
}

// fileModeOK: validateFileMode finds nothing wrong with mode.
func fileModeOK(mode *int32) bool {
	return mode == nil || (*mode >= 0 && *mode <= 0777)
}

// keyToPathOK: validateKeyToPath finds nothing wrong with kp.
func keyToPathOK(kp *corev1.KeyToPath) bool {
	return kp.Key != "" && kp.Path != "" && localPathOK(kp.Path) && fileModeOK(kp.Mode)
}

// downwardAPIFileOK: validateDownwardAPIVolumeFile finds nothing wrong with
// f, for a file of one of the plain (unsubscripted) fields a volume may
// show; others are left to the validator.
func downwardAPIFileOK(f *corev1.DownwardAPIVolumeFile) bool {
	if f.Path == "" || !localPathOK(f.Path) || f.FieldRef == nil || f.ResourceFieldRef != nil || !fileModeOK(f.Mode) {
		return false
	}
	if f.FieldRef.APIVersion != "v1" {
		return false
	}
	switch f.FieldRef.FieldPath {
	case "metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid":
		return true
	}
	return false
}

// projectedOK: validateProjectedVolumeSource finds nothing wrong with p,
// which projects Secrets, ConfigMaps, downward API files and service
// account tokens (cluster trust bundles are left to the validator).
func projectedOK(p *corev1.ProjectedVolumeSource, opts podValidationOptions) bool {
	if !fileModeOK(p.DefaultMode) {
		return false
	}
	// The paths the validator checks for duplicates, without a set.
	var buf [16]string
	paths := buf[:0]
	add := func(p string) bool {
		if p == "" {
			return true
		}
		for _, q := range paths {
			if q == p {
				return false
			}
		}
		paths = append(paths, p)
		return true
	}
	for i := range p.Sources {
		s := &p.Sources[i]
		if s.ClusterTrustBundle != nil {
			return false
		}
		n := 0
		// A Secret's or ConfigMap's keys: a name, and items that are valid
		// and new paths.
		keysOK := func(name string, items []corev1.KeyToPath) bool {
			if name == "" {
				return false
			}
			for j := range items {
				if !keyToPathOK(&items[j]) || !add(items[j].Path) {
					return false
				}
			}
			return true
		}
		if s.Secret != nil {
			n++
			if !keysOK(s.Secret.Name, s.Secret.Items) {
				return false
			}
		}
		if s.ConfigMap != nil {
			n++
			if !keysOK(s.ConfigMap.Name, s.ConfigMap.Items) {
				return false
			}
		}
		if s.DownwardAPI != nil {
			n++
			for j := range s.DownwardAPI.Items {
				if !downwardAPIFileOK(&s.DownwardAPI.Items[j]) || !add(s.DownwardAPI.Items[j].Path) {
					return false
				}
			}
		}
		if t := s.ServiceAccountToken; t != nil {
			n++
			if t.ExpirationSeconds == nil || *t.ExpirationSeconds < 10*60 || *t.ExpirationSeconds > 1<<32 || t.Path == "" {
				return false
			}
			if !opts.AllowNonLocalProjectedTokenPath && !localPathOK(t.Path) {
				return false
			}
		}
		if n > 1 {
			return false
		}
	}
	return true
}

// volumeOK: validateVolumes finds nothing wrong with vol, a projected
// volume (other kinds are left to the validator) whose name is not among
// the valid volumes before it (vols).
func volumeOK(vol *corev1.Volume, vols map[string]*corev1.VolumeSource, opts podValidationOptions) bool {
	if !quickChecks || vol.Projected == nil || vol.Name == "" || !isDNS1123Label(vol.Name) {
		return false
	}
	if _, dup := vols[vol.Name]; dup {
		return false
	}
	n := 0
	for _, c := range volumeSourceChecks {
		if c.set(&vol.VolumeSource) {
			n++
		}
	}
	return n == 1 && projectedOK(vol.Projected, opts)
}

// volumeMountsOK: validateVolumeMounts finds nothing wrong with mounts,
// which mount volumes by name at distinct paths, without sub-paths,
// propagation or recursive read-only settings (those are left to the
// validator).
func volumeMountsOK(mounts []corev1.VolumeMount, volDevices map[string]string, volumes map[string]*corev1.VolumeSource) bool {
	if !quickChecks || len(mounts) > 16 {
		return false
	}
	for i := range mounts {
		m := &mounts[i]
		if m.Name == "" || m.MountPath == "" || m.SubPath != "" || m.SubPathExpr != "" || m.MountPropagation != nil || m.RecursiveReadOnly != nil {
			return false
		}
		if _, ok := volumes[m.Name]; !ok {
			return false
		}
		if _, ok := volDevices[m.Name]; ok {
			return false
		}
		for _, d := range volDevices {
			if d == m.MountPath {
				return false
			}
		}
		for j := range i {
			if mounts[j].MountPath == m.MountPath {
				return false
			}
		}
	}
	return true
}
