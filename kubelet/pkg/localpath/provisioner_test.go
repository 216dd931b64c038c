package localpath

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

type fixture struct {
	p        *Provisioner
	client   *fake.Clientset
	recorder *record.FakeRecorder
	dir      string
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(20), dir: t.TempDir()}
	factory := informers.NewSharedInformerFactory(f.client, 0)
	claims, volumes := factory.Core().V1().PersistentVolumeClaims(), factory.Core().V1().PersistentVolumes()
	p, err := New(Options{NodeName: "n1", Dir: f.dir, Client: f.client, Claims: claims, Volumes: volumes, Recorder: f.recorder})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.PersistentVolumeClaim:
			_ = claims.Informer().GetIndexer().Add(o)
		case *corev1.PersistentVolume:
			_ = volumes.Informer().GetIndexer().Add(o)
		}
	}
	f.p = p
	return f
}

func (f *fixture) events() []string {
	var out []string
	for len(f.recorder.Events) > 0 {
		out = append(out, <-f.recorder.Events)
	}
	return out
}

var localPath = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, Provisioner: ProvisionerName,
	ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete)}

func handedOver(node string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", UID: "u1", Annotations: map[string]string{
			annStorageProvisioner: ProvisionerName, annSelectedNode: node}},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("local-path"), AccessModes: modes,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
		},
	}
}

func TestProvision(t *testing.T) {
	tests := []struct {
		name       string
		claim      *corev1.PersistentVolumeClaim
		objs       []runtime.Object
		wantVolume bool
		wantEvents []string
	}{
		{name: "claim of this node: directory and volume", claim: handedOver("n1"), objs: []runtime.Object{localPath}, wantVolume: true,
			wantEvents: []string{`Normal Provisioning External provisioner is provisioning volume for claim "default/data"`,
				"Normal ProvisioningSucceeded Successfully provisioned volume pvc-u1"}},
		{name: "claim of another node: nothing", claim: handedOver("n2"), objs: []runtime.Object{localPath}},
		{name: "ReadWriteMany: refused with an event", claim: handedOver("n1", corev1.ReadWriteMany), objs: []runtime.Object{localPath},
			wantEvents: []string{`Warning ProvisioningFailed failed to provision volume with StorageClass "local-path": local-path supports access modes ReadWriteOnce and ReadWriteOncePod only, not ReadWriteMany`}},
		{name: "class gone: event", claim: handedOver("n1"),
			wantEvents: []string{`Warning ProvisioningFailed storageclass.storage.k8s.io "local-path" not found`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, append(tt.objs, tt.claim)...)
			if err := f.p.sync(context.Background(), claimPrefix+"default/data"); err != nil {
				t.Fatal(err)
			}
			pv, err := f.client.CoreV1().PersistentVolumes().Get(context.Background(), "pvc-u1", metav1.GetOptions{})
			if (err == nil) != tt.wantVolume {
				t.Fatalf("volume made: %v, want %v", err == nil, tt.wantVolume)
			}
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.wantEvents)
			}
			if !tt.wantVolume {
				return
			}
			dir := filepath.Join(f.dir, "pvc-u1_default_data")
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o777 {
				t.Errorf("directory %s: %v %v", dir, fi, err)
			}
			if pv.Spec.Local == nil || pv.Spec.Local.Path != dir || pv.Spec.ClaimRef.UID != "u1" ||
				pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Spec.StorageClassName != "local-path" ||
				pv.Annotations[annDynamicallyProvisioned] != ProvisionerName {
				t.Errorf("volume %+v", pv)
			}
			if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "2Gi" {
				t.Errorf("capacity %s", q.String())
			}
			term := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
			if term.Key != corev1.LabelHostname || term.Operator != corev1.NodeSelectorOpIn || !slices.Equal(term.Values, []string{"n1"}) {
				t.Errorf("node affinity %+v", term)
			}
		})
	}
}

func TestReclaim(t *testing.T) {
	volume := func(dir, path string, phase corev1.PersistentVolumePhase, policy corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-u1", UID: "v1", Annotations: map[string]string{annNode: "n1", annDynamicallyProvisioned: ProvisionerName}},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: policy,
				PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: filepath.Join(dir, path)}}},
			Status: corev1.PersistentVolumeStatus{Phase: phase},
		}
	}
	tests := []struct {
		name        string
		phase       corev1.PersistentVolumePhase
		policy      corev1.PersistentVolumeReclaimPolicy
		path        string
		wantDeleted bool
		wantEvent   string
	}{
		{name: "Released, Delete: directory and volume gone", phase: corev1.VolumeReleased, policy: corev1.PersistentVolumeReclaimDelete, path: "pvc-u1_default_data", wantDeleted: true},
		{name: "Released, Retain: kept", phase: corev1.VolumeReleased, policy: corev1.PersistentVolumeReclaimRetain, path: "pvc-u1_default_data"},
		{name: "Bound: kept", phase: corev1.VolumeBound, policy: corev1.PersistentVolumeReclaimDelete, path: "pvc-u1_default_data"},
		{name: "a path outside the directory: kept, with an event", phase: corev1.VolumeReleased, policy: corev1.PersistentVolumeReclaimDelete,
			path: "sub/pvc-u1", wantEvent: "Warning VolumeFailedDelete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := newFixture(t)
			f.dir = dir
			f.p.dir = dir
			pv := volume(dir, tt.path, tt.phase, tt.policy)
			_, _ = f.client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{})
			data := filepath.Join(dir, tt.path, "file")
			if err := os.MkdirAll(filepath.Dir(data), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(data, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := f.p.reclaim(context.Background(), pv); err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(data)
			_, getErr := f.client.CoreV1().PersistentVolumes().Get(context.Background(), "pvc-u1", metav1.GetOptions{})
			if deleted := statErr != nil && getErr != nil; deleted != tt.wantDeleted {
				t.Errorf("deleted %v (dir: %v, volume: %v), want %v", deleted, statErr, getErr, tt.wantDeleted)
			}
			events := strings.Join(f.events(), "\n")
			if !strings.HasPrefix(events, tt.wantEvent) || (tt.wantEvent == "" && events != "") {
				t.Errorf("events %q, want %q", events, tt.wantEvent)
			}
		})
	}
}
