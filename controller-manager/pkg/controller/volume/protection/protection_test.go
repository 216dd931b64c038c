package protection

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func actions(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if u, ok := a.(core.UpdateAction); ok {
			s += " " + u.GetObject().(metav1.Object).GetName()
		}
		out = append(out, s)
	}
	return out
}

func claim(deleting bool, finalizers ...string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", UID: "data-uid", Finalizers: finalizers}}
	if deleting {
		c.DeletionTimestamp = ptr.To(metav1.Now())
	}
	return c
}

func podWith(name, node string, phase corev1.PodPhase, vol corev1.VolumeSource) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec:       corev1.PodSpec{NodeName: node, Volumes: []corev1.Volume{{Name: "v", VolumeSource: vol}}},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

var usesData = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}

func TestPVCProtection(t *testing.T) {
	tests := []struct {
		name           string
		claim          *corev1.PersistentVolumeClaim
		cached, live   []runtime.Object
		wantFinalizers []string
		wantUpdate     bool
	}{
		{name: "finalizer added to a claim without it", claim: claim(false), wantFinalizers: []string{PVCProtectionFinalizer}, wantUpdate: true},
		{name: "nothing to do for a claim in normal life", claim: claim(false, PVCProtectionFinalizer), wantFinalizers: []string{PVCProtectionFinalizer}},
		{name: "deleted, unused: finalizer removed", claim: claim(true, PVCProtectionFinalizer, "other"), wantFinalizers: []string{"other"}, wantUpdate: true},
		{name: "deleted, used by a running pod: kept", claim: claim(true, PVCProtectionFinalizer),
			cached: []runtime.Object{podWith("web", "n1", corev1.PodRunning, usesData)}, wantFinalizers: []string{PVCProtectionFinalizer}},
		{name: "deleted, used by a pod the cache has not seen yet: kept", claim: claim(true, PVCProtectionFinalizer),
			live: []runtime.Object{podWith("web", "n1", corev1.PodPending, usesData)}, wantFinalizers: []string{PVCProtectionFinalizer}},
		{name: "deleted, pod finished: removed", claim: claim(true, PVCProtectionFinalizer),
			cached: []runtime.Object{podWith("job", "n1", corev1.PodSucceeded, usesData)}, wantFinalizers: []string{}, wantUpdate: true},
		{name: "deleted, pod not scheduled: removed", claim: claim(true, PVCProtectionFinalizer),
			cached: []runtime.Object{podWith("web", "", corev1.PodPending, usesData)}, wantFinalizers: []string{}, wantUpdate: true},
		{name: "deleted, the ephemeral claim of a running pod: kept", claim: func() *corev1.PersistentVolumeClaim {
			c := claim(true, PVCProtectionFinalizer)
			c.Name = "web-v"
			c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "web-uid", Controller: ptr.To(true)}}
			return c
		}(), cached: []runtime.Object{podWith("web", "n1", corev1.PodRunning, corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})},
			wantFinalizers: []string{PVCProtectionFinalizer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append(append([]runtime.Object{tt.claim}, tt.cached...), tt.live...)
			client := fake.NewSimpleClientset(objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			pvcs, pods := factory.Core().V1().PersistentVolumeClaims(), factory.Core().V1().Pods()
			c, err := NewPVCController(client, pvcs, pods, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = pvcs.Informer().GetIndexer().Add(tt.claim)
			for _, o := range tt.cached {
				_ = pods.Informer().GetIndexer().Add(o)
			}
			client.ClearActions()
			if err := c.sync(context.Background(), "default/"+tt.claim.Name); err != nil {
				t.Fatal(err)
			}
			got, _ := client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), tt.claim.Name, metav1.GetOptions{})
			if !slices.Equal(got.Finalizers, tt.wantFinalizers) && len(got.Finalizers)+len(tt.wantFinalizers) > 0 {
				t.Errorf("finalizers %v, want %v", got.Finalizers, tt.wantFinalizers)
			}
			updated := slices.Contains(actions(client), "update persistentvolumeclaims "+tt.claim.Name)
			if updated != tt.wantUpdate {
				t.Errorf("updated %v, want %v (%v)", updated, tt.wantUpdate, actions(client))
			}
		})
	}
}

func TestPVProtection(t *testing.T) {
	volume := func(deleting bool, phase corev1.PersistentVolumePhase, finalizers ...string) *corev1.PersistentVolume {
		v := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1", Finalizers: finalizers}, Status: corev1.PersistentVolumeStatus{Phase: phase}}
		if deleting {
			v.DeletionTimestamp = ptr.To(metav1.Now())
		}
		return v
	}
	tests := []struct {
		name           string
		pv             *corev1.PersistentVolume
		wantFinalizers []string
	}{
		{name: "added", pv: volume(false, corev1.VolumeAvailable), wantFinalizers: []string{PVProtectionFinalizer}},
		{name: "deleted while Bound: kept", pv: volume(true, corev1.VolumeBound, PVProtectionFinalizer), wantFinalizers: []string{PVProtectionFinalizer}},
		{name: "deleted while Released: removed", pv: volume(true, corev1.VolumeReleased, PVProtectionFinalizer), wantFinalizers: nil},
		{name: "deleted while Available: removed", pv: volume(true, corev1.VolumeAvailable, PVProtectionFinalizer), wantFinalizers: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(tt.pv)
			pvs := informers.NewSharedInformerFactory(client, 0).Core().V1().PersistentVolumes()
			c, err := NewPVController(client, pvs, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = pvs.Informer().GetIndexer().Add(tt.pv)
			if err := c.sync(context.Background(), "pv1"); err != nil {
				t.Fatal(err)
			}
			got, _ := client.CoreV1().PersistentVolumes().Get(context.Background(), "pv1", metav1.GetOptions{})
			if len(got.Finalizers)+len(tt.wantFinalizers) > 0 && !slices.Equal(got.Finalizers, tt.wantFinalizers) {
				t.Errorf("finalizers %v, want %v", got.Finalizers, tt.wantFinalizers)
			}
		})
	}
}
