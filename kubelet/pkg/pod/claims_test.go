package pod

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

type fakeClaims struct {
	claims  map[string]*corev1.PersistentVolumeClaim
	volumes map[string]*corev1.PersistentVolume
}

func (f fakeClaims) Claim(_ context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	if c, ok := f.claims[ns+"/"+name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, name)
}

func (f fakeClaims) Volume(_ context.Context, name string) (*corev1.PersistentVolume, error) {
	if v, ok := f.volumes[name]; ok {
		return v, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumes"}, name)
}

func TestSetUpClaim(t *testing.T) {
	localDir, hostDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(localDir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	bound := func(name, volume string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("u-claim-" + name[:1])},
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	claims := fakeClaims{
		claims: map[string]*corev1.PersistentVolumeClaim{
			"ns/local":   bound("local", "pv-local", corev1.ClaimBound),
			"ns/host":    bound("host", "pv-host", corev1.ClaimBound),
			"ns/pending": bound("pending", "", corev1.ClaimPending),
			"ns/nfs":     bound("nfs", "pv-nfs", corev1.ClaimBound),
		},
		volumes: map[string]*corev1.PersistentVolume{
			"pv-local": {ObjectMeta: metav1.ObjectMeta{Name: "pv-local"}, Spec: corev1.PersistentVolumeSpec{
				ClaimRef: &corev1.ObjectReference{UID: "u-claim-l"}, PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: localDir}}}},
			"pv-host": {ObjectMeta: metav1.ObjectMeta{Name: "pv-host"}, Spec: corev1.PersistentVolumeSpec{
				ClaimRef: &corev1.ObjectReference{UID: "u-claim-h"}, PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}}},
			"pv-nfs": {ObjectMeta: metav1.ObjectMeta{Name: "pv-nfs"}, Spec: corev1.PersistentVolumeSpec{
				ClaimRef: &corev1.ObjectReference{UID: "u-claim-n"}, PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}}},
		},
	}
	tests := []struct {
		name     string
		claim    string
		readOnly bool
		want     Volume
		wantErr  string
	}{
		{name: "local volume", claim: "local", want: Volume{Path: localDir}},
		{name: "hostPath volume, read-only", claim: "host", readOnly: true, want: Volume{Path: hostDir, ReadOnly: true}},
		{name: "claim not bound yet", claim: "pending", wantErr: `PVC ns/pending has non-bound phase ("Pending") or empty pvc.Spec.VolumeName ("")`},
		{name: "claim missing", claim: "gone", wantErr: "error processing PVC ns/gone"},
		{name: "unsupported volume kind", claim: "nfs", wantErr: "only hostPath and local volumes are supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &VolumesHook{Claims: claims}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "pod-uid"},
				Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](4321)}}}
			got, err := h.setUpClaim(context.Background(), pod, tt.claim, tt.readOnly)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	// fsGroup owns the local volume (group rw, setgid on directories); the
	// hostPath volume is left alone, as upstream.
	for path, wantGroup := range map[string]bool{localDir: true, filepath.Join(localDir, "f"): true, hostDir: false} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		gid := fi.Sys().(*syscall.Stat_t).Gid
		if (gid == 4321) != wantGroup || (wantGroup && fi.Mode().Perm()&0o060 != 0o060) || (wantGroup && fi.IsDir() && fi.Mode()&os.ModeSetgid == 0) {
			t.Errorf("%s: gid %d mode %v", path, gid, fi.Mode())
		}
	}
}
