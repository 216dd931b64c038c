package ephemeral

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

func ephemeralPod(deleting bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "web-uid"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						StorageClassName: ptr.To("local-path"),
					},
				}}}},
		}},
	}
	if deleting {
		p.DeletionTimestamp = ptr.To(metav1.Now())
	}
	return p
}

func TestSync(t *testing.T) {
	tests := []struct {
		name       string
		pod        *corev1.Pod
		claims     []runtime.Object
		wantCreate bool
		wantErr    bool
		wantEvents []string
	}{
		{name: "claim made, owned by the pod", pod: ephemeralPod(false), wantCreate: true},
		{name: "claim already there and owned: nothing", pod: ephemeralPod(false), claims: []runtime.Object{&corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "web-scratch", Namespace: "default", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "web-uid", Controller: ptr.To(true)}}}}}},
		{name: "claim of that name not the pod's: event, no create", pod: ephemeralPod(false), wantErr: true,
			claims:     []runtime.Object{&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-scratch", Namespace: "default"}}},
			wantEvents: []string{"Warning FailedBinding ephemeral volume scratch: PVC default/web-scratch was not created for pod default/web (pod is not owner)"}},
		{name: "pod being deleted: nothing", pod: ephemeralPod(true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(append(tt.claims, tt.pod)...)
			factory := informers.NewSharedInformerFactory(client, 0)
			pods, pvcs := factory.Core().V1().Pods(), factory.Core().V1().PersistentVolumeClaims()
			rec := record.NewFakeRecorder(10)
			c, err := NewController(client, pods, pvcs, rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = pods.Informer().GetIndexer().Add(tt.pod)
			for _, o := range tt.claims {
				_ = pvcs.Informer().GetIndexer().Add(o)
			}
			client.ClearActions()
			if err := c.sync(context.Background(), "default/web"); (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			var created bool
			for _, a := range client.Actions() {
				created = created || a.GetVerb() == "create"
			}
			if created != tt.wantCreate {
				t.Fatalf("created %v, want %v", created, tt.wantCreate)
			}
			if created {
				pvc, err := client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "web-scratch", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				ref := metav1.GetControllerOf(pvc)
				if ref == nil || ref.UID != "web-uid" || !ptr.Deref(ref.BlockOwnerDeletion, false) || pvc.Labels["app"] != "web" ||
					ptr.Deref(pvc.Spec.StorageClassName, "") != "local-path" {
					t.Errorf("claim %+v", pvc)
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
