package expand

import (
	"context"
	"slices"
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

func TestExpand(t *testing.T) {
	claim := func(request, capacity string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("sc"), VolumeName: "pv",
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
				Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}},
		}
	}
	volume := func(provisioner string) *corev1.PersistentVolume {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"},
			Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}
		if provisioner != "" {
			pv.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": provisioner}
		}
		return pv
	}
	tests := []struct {
		name         string
		claim        *corev1.PersistentVolumeClaim
		pv           *corev1.PersistentVolume
		wantCapacity string // the claim's status.capacity after
		wantResizer  string
		wantEvents   []string
	}{
		{name: "local-path: recorded on the volume and the claim", claim: claim("3Gi", "1Gi"), pv: volume(LocalPathProvisioner), wantCapacity: "3Gi",
			wantEvents: []string{"Normal Resizing External resizer is resizing volume pv", "Normal VolumeResizeSuccessful Resize volume succeeded"}},
		{name: "another provisioner: handed to its resizer", claim: claim("3Gi", "1Gi"), pv: volume("example.com/csi"), wantCapacity: "1Gi",
			wantResizer: "example.com/csi", wantEvents: []string{"Normal ExternalExpanding waiting for an external controller to expand this PVC"}},
		{name: "no resize asked", claim: claim("1Gi", "1Gi"), pv: volume(LocalPathProvisioner), wantCapacity: "1Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []runtime.Object{tt.claim, tt.pv, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc"}, Provisioner: LocalPathProvisioner}}
			client := fake.NewSimpleClientset(objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			pvcs, pvs, scs := f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes(), f.Storage().V1().StorageClasses()
			_ = pvcs.Informer().GetIndexer().Add(tt.claim)
			_ = pvs.Informer().GetIndexer().Add(tt.pv)
			_ = scs.Informer().GetIndexer().Add(objs[2])
			rec := record.NewFakeRecorder(10)
			c, err := NewController(client, pvcs, pvs, scs, rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.sync(context.Background(), "default/data"); err != nil {
				t.Fatal(err)
			}
			got, _ := client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "data", metav1.GetOptions{})
			if q := got.Status.Capacity[corev1.ResourceStorage]; q.String() != tt.wantCapacity {
				t.Errorf("capacity %s, want %s", q.String(), tt.wantCapacity)
			}
			if got.Annotations[annStorageResizer] != tt.wantResizer {
				t.Errorf("resizer %q, want %q", got.Annotations[annStorageResizer], tt.wantResizer)
			}
			if tt.wantCapacity == "3Gi" {
				pv, _ := client.CoreV1().PersistentVolumes().Get(context.Background(), "pv", metav1.GetOptions{})
				if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "3Gi" {
					t.Errorf("volume capacity %s", q.String())
				}
			}
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if !slices.Equal(events, tt.wantEvents) {
				t.Errorf("events %q, want %q", events, tt.wantEvents)
			}
		})
	}
}
