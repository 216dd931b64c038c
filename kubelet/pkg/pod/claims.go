package pod

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClaimReader reads the claims and volumes behind persistentVolumeClaim
// and ephemeral volumes.
type ClaimReader interface {
	Claim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	Volume(ctx context.Context, name string) (*corev1.PersistentVolume, error)
}

// setUpClaim resolves a claim to its bound volume and the directory the
// containers mount: the path of a hostPath or local volume (skiff mounts
// no other kind). A claim not bound yet, being deleted, or of another pod
// (an ephemeral claim) is an error the next sync retries, with upstream's
// words. For a local volume the pod's fsGroup owns the directory, as
// upstream's SetVolumeOwnership does (hostPath volumes are left as they
// are, as upstream does).
func (h *VolumesHook) setUpClaim(ctx context.Context, pod *corev1.Pod, name string, readOnly bool) (Volume, error) {
	if h.Claims == nil {
		return Volume{}, fmt.Errorf("persistentVolumeClaim volumes are not supported here")
	}
	pvc, err := h.Claims.Claim(ctx, pod.Namespace, name)
	if err != nil {
		return Volume{}, fmt.Errorf("error processing PVC %s/%s: %w", pod.Namespace, name, err)
	}
	if pvc.DeletionTimestamp != nil {
		return Volume{}, fmt.Errorf("can't start pod because PVC %s/%s is being deleted", pod.Namespace, name)
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
		return Volume{}, fmt.Errorf("PVC %s/%s has non-bound phase (%q) or empty pvc.Spec.VolumeName (%q)",
			pod.Namespace, name, pvc.Status.Phase, pvc.Spec.VolumeName)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Ephemeral != nil && pod.Name+"-"+v.Name == name {
			if ref := metav1.GetControllerOfNoCopy(pvc); ref == nil || ref.UID != pod.UID {
				return Volume{}, fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pod.Namespace, name, pod.Namespace, pod.Name)
			}
		}
	}
	pv, err := h.Claims.Volume(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return Volume{}, fmt.Errorf("error processing PersistentVolume %s of PVC %s/%s: %w", pvc.Spec.VolumeName, pod.Namespace, name, err)
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
		return Volume{}, fmt.Errorf("PersistentVolume %s is not bound to PVC %s/%s", pv.Name, pod.Namespace, name)
	}
	switch {
	case pv.Spec.HostPath != nil:
		vol, err := setUpHostPath(pv.Spec.HostPath)
		vol.ReadOnly = readOnly
		return vol, err
	case pv.Spec.Local != nil:
		fi, err := os.Stat(pv.Spec.Local.Path)
		if err != nil {
			return Volume{}, fmt.Errorf("local volume %s: %w", pv.Name, err)
		}
		if !fi.IsDir() {
			return Volume{}, fmt.Errorf("local volume %s: %s is not a directory", pv.Name, pv.Spec.Local.Path)
		}
		if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil && !readOnly {
			if err := setVolumeOwnership(pv.Spec.Local.Path, *sc.FSGroup, sc.FSGroupChangePolicy); err != nil {
				return Volume{}, fmt.Errorf("local volume %s: applying fsGroup %d: %w", pv.Name, *sc.FSGroup, err)
			}
		}
		return Volume{Path: pv.Spec.Local.Path, ReadOnly: readOnly}, nil
	}
	return Volume{}, fmt.Errorf("PersistentVolume %s: only hostPath and local volumes are supported by skiff-kubelet", pv.Name)
}

// setVolumeOwnership is upstream's: every file gets group fsGroup and
// group read/write (and execute where its owner has it), directories the
// setgid bit; with fsGroupChangePolicy OnRootMismatch nothing is done
// when the root already has them.
func setVolumeOwnership(dir string, fsGroup int64, policy *corev1.PodFSGroupChangePolicy) error {
	if policy != nil && *policy == corev1.FSGroupChangeOnRootMismatch {
		if ok, err := ownedBy(dir, fsGroup); err != nil || ok {
			return err
		}
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if err := os.Lchown(path, -1, int(fsGroup)); err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fi.Mode()
		want := mode.Perm() | 0o060
		if mode&0o100 != 0 {
			want |= 0o010
		}
		if d.IsDir() {
			return os.Chmod(path, want|0o010|os.ModeSetgid|(mode&os.ModeSticky))
		}
		if want != mode.Perm() {
			return os.Chmod(path, want|(mode&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)))
		}
		return nil
	})
}
