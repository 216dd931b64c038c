package pod

import (
	"context"
	"errors"
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
	"k8s.io/client-go/tools/record"
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
			"ns/orphan":  bound("orphan", "pv-gone", corev1.ClaimBound),
			"ns/stolen":  bound("stolen", "pv-local", corev1.ClaimBound),
			"ns/deleting": func() *corev1.PersistentVolumeClaim {
				c := bound("deleting", "pv-local", corev1.ClaimBound)
				c.DeletionTimestamp = &metav1.Time{}
				return c
			}(),
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
		{name: "claim not bound yet", claim: "pending", wantErr: "error processing PVC ns/pending: PVC is not bound"},
		{name: "claim being deleted", claim: "deleting", wantErr: "error processing PVC ns/deleting: PVC is being deleted"},
		{name: "claim missing", claim: "gone", wantErr: "error processing PVC ns/gone: failed to fetch PVC from API server: persistentvolumeclaims \"gone\" not found"},
		{name: "volume gone", claim: "orphan", wantErr: "error processing PVC ns/orphan: failed to fetch PV pv-gone from API server"},
		{name: "volume bound to another claim", claim: "stolen", wantErr: "error processing PVC ns/stolen: found PV object pv-local but its pv.Spec.ClaimRef.UID u-claim-l does not point to claim.UID u-claim-s"},
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
				// A claim that does not resolve is a volume upstream fails
				// to process; a volume of a kind skiff cannot mount fails
				// to mount.
				var pe *processError
				if errors.As(err, &pe) != strings.HasPrefix(tt.wantErr, "error processing PVC") {
					t.Errorf("%v: processError %v", err, errors.As(err, &pe))
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

// TestVolumeErrorsReported: a pod whose claim is not bound and whose
// hostPath volume fails its type check gets upstream's FailedMount events
// (the failed mount, then the pod's summary naming the unmounted volumes
// and the claim it failed to process), and its status keeps the
// containers ContainerCreating with PodReadyToStartContainers False, as
// upstream (which mounts before it makes the sandbox) reports it. Once the
// claim is bound and the path is a directory, the volumes set up and the
// condition turns True.
func TestVolumeErrorsReported(t *testing.T) {
	dir, notDir := t.TempDir(), filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "u-data"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	claims := fakeClaims{claims: map[string]*corev1.PersistentVolumeClaim{"ns/data": claim}, volumes: map[string]*corev1.PersistentVolume{
		"pv-data": {ObjectMeta: metav1.ObjectMeta{Name: "pv-data"}, Spec: corev1.PersistentVolumeSpec{
			ClaimRef: &corev1.ObjectReference{UID: "u-data"}, PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}}}}}}
	rec := record.NewFakeRecorder(10)
	h := &VolumesHook{Dir: t.TempDir(), Claims: claims, Recorder: rec, Mounter: &fakeMounter{mounted: map[string]int64{}}}
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	hp := &corev1.HostPathVolumeSource{Path: notDir, Type: ptr.To(corev1.HostPathDirectory)}
	p.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: hp}},
	}
	s := NewState(p)
	s.Sandbox = &Sandbox{IPs: []string{"10.244.0.5"}}

	err := h.Prepare(context.Background(), s)
	want := "unmounted volumes=[data host], unattached volumes=[], failed to process volumes=[data]: " +
		"error processing PVC ns/data: PVC is not bound; hostPath type check failed: " + notDir + " is not a directory"
	if err == nil || err.Error() != want {
		t.Fatalf("Prepare: %v\nwant %s", err, want)
	}
	wantEvents := []string{
		`Warning FailedMount MountVolume.SetUp failed for volume "host" : hostPath type check failed: ` + notDir + " is not a directory",
		"Warning FailedMount Unable to attach or mount volumes: " + want,
	}
	for _, w := range wantEvents {
		select {
		case got := <-rec.Events:
			if got != w {
				t.Errorf("event %q\nwant  %q", got, w)
			}
		default:
			t.Errorf("no event; want %q", w)
		}
	}
	st := ComputeStatus(s, p.Status, "10.0.0.1")
	if st.Phase != corev1.PodPending || len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Waiting == nil ||
		st.ContainerStatuses[0].State.Waiting.Reason != ReasonContainerCreating {
		t.Errorf("status while volumes fail: %+v", st)
	}
	if c := podCondition(st, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("PodReadyToStartContainers while volumes fail: %+v", c)
	}

	// Bound, and the path a directory: the volumes set up.
	claim.Spec.VolumeName, claim.Status.Phase = "pv-data", corev1.ClaimBound
	hp.Path = dir
	if err := h.Prepare(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if s.Volumes["data"].Path != dir {
		t.Errorf("volumes %+v", s.Volumes)
	}
	if c := podCondition(ComputeStatus(s, p.Status, "10.0.0.1"), corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("PodReadyToStartContainers once the volumes are set up: %+v", c)
	}
}

func podCondition(st corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// TestClaimMountFailedEvent: a claim's volume that fails to mount is named
// in the event by its PersistentVolume, as upstream's operation executor
// names a claim's volume; the claim itself resolved, so it is not among
// the volumes failed to process.
func TestClaimMountFailedEvent(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	claims := fakeClaims{
		claims: map[string]*corev1.PersistentVolumeClaim{"ns/data": {ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "u-data"},
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-data"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}},
		volumes: map[string]*corev1.PersistentVolume{"pv-data": {ObjectMeta: metav1.ObjectMeta{Name: "pv-data"}, Spec: corev1.PersistentVolumeSpec{
			ClaimRef: &corev1.ObjectReference{UID: "u-data"}, PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: missing}}}}},
	}
	rec := record.NewFakeRecorder(10)
	h := &VolumesHook{Dir: t.TempDir(), Claims: claims, Recorder: rec, Mounter: &fakeMounter{mounted: map[string]int64{}}}
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	s := NewState(p)
	if err := h.Prepare(context.Background(), s); err == nil || !strings.HasPrefix(err.Error(), "unmounted volumes=[data], unattached volumes=[], failed to process volumes=[]: local volume pv-data: stat "+missing) {
		t.Fatalf("Prepare: %v", err)
	}
	if got := <-rec.Events; !strings.HasPrefix(got, `Warning FailedMount MountVolume.SetUp failed for volume "pv-data" : local volume pv-data: stat `+missing) {
		t.Errorf("event %q", got)
	}
	if !s.VolumesFailed() {
		t.Error("VolumesFailed false after a failed mount")
	}
}
