package pod

import (
	"context"
	"errors"
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

// processError is a claim that does not resolve to a volume, which
// upstream's desired state populator reports as a volume it failed to
// process (not one that failed to mount).
type processError struct{ err error }

func (e *processError) Error() string { return e.err.Error() }
func (e *processError) Unwrap() error { return e.err }

// claimVolume is the claim's bound volume, or upstream's
// populator's error (createVolumeSpec, getPVCExtractPV, getPVSpec).
func (h *VolumesHook) claimVolume(ctx context.Context, pod *corev1.Pod, name string) (*corev1.PersistentVolume, error) {
	processing := func(err error) error {
		return fmt.Errorf("error processing PVC %s/%s: %w", pod.Namespace, name, err)
	}
	pvc, err := h.Claims.Claim(ctx, pod.Namespace, name)
	if err != nil {
		return nil, processing(fmt.Errorf("failed to fetch PVC from API server: %w", err))
	}
	if pvc.DeletionTimestamp != nil {
		return nil, processing(errors.New("PVC is being deleted"))
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return nil, processing(errors.New("PVC is not bound"))
	}
	if pvc.Spec.VolumeName == "" {
		return nil, processing(errors.New("PVC has empty pvc.Spec.VolumeName"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Ephemeral != nil && pod.Name+"-"+v.Name == name {
			if ref := metav1.GetControllerOfNoCopy(pvc); ref == nil || ref.UID != pod.UID {
				return nil, fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pod.Namespace, name, pod.Namespace, pod.Name)
			}
		}
	}
	pv, err := h.Claims.Volume(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return nil, processing(fmt.Errorf("failed to fetch PV %s from API server: %w", pvc.Spec.VolumeName, err))
	}
	if pv.Spec.ClaimRef == nil {
		return nil, processing(fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", pv.Name))
	}
	if pv.Spec.ClaimRef.UID != pvc.UID {
		return nil, processing(fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", pv.Name, pv.Spec.ClaimRef.UID, pvc.UID))
	}
	return pv, nil
}

// setUpClaim resolves a claim to its bound volume and the directory the
// containers mount: the path of a hostPath or local volume (skiff mounts
// no other kind). A claim not bound yet, being deleted, or of another pod
// (an ephemeral claim) is a processError the next sync retries, with
// upstream's words. For a local volume the pod's fsGroup owns the
// directory, as upstream's SetVolumeOwnership does (hostPath volumes are
// left as they are, as upstream does).
func (h *VolumesHook) setUpClaim(ctx context.Context, pod *corev1.Pod, name string, readOnly bool) (Volume, error) {
	if h.Claims == nil {
		return Volume{}, fmt.Errorf("persistentVolumeClaim volumes are not supported here")
	}
	pv, err := h.claimVolume(ctx, pod, name)
	if err != nil {
		return Volume{}, &processError{err}
	}
	vol, err := setUpPersistentVolume(pod, pv, readOnly)
	if err != nil {
		return Volume{}, &mountError{volume: pv.Name, err: err}
	}
	return vol, nil
}

// mountError is a volume that failed to mount; volume is the name
// upstream's events give it (a claim's: its PersistentVolume's).
type mountError struct {
	volume string
	err    error
}

func (e *mountError) Error() string { return e.err.Error() }
func (e *mountError) Unwrap() error { return e.err }

// setUpPersistentVolume is the directory of a claim's bound hostPath or
// local volume.
func setUpPersistentVolume(pod *corev1.Pod, pv *corev1.PersistentVolume, readOnly bool) (Volume, error) {
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
