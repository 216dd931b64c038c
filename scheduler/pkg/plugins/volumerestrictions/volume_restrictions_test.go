package volumerestrictions

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"skiff.dev/scheduler/pkg/framework"
)

func TestReadWriteOncePod(t *testing.T) {
	pod := func(name, claim string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}, Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}}}
	}
	claim := func(name string, mode corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{mode}}}
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		running []*corev1.Pod
		want    string
	}{
		{name: "RWOP claim in use by another pod", pod: pod("b", "once"), running: []*corev1.Pod{pod("a", "once")}, want: "Unschedulable: " + ErrReasonReadWriteOncePodConflict},
		{name: "RWOP claim free", pod: pod("b", "once"), running: []*corev1.Pod{pod("a", "other")}, want: ""},
		{name: "RWO claim shared", pod: pod("b", "many"), running: []*corev1.Pod{pod("a", "many")}, want: "Skip: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
			pvcs := f.Core().V1().PersistentVolumeClaims()
			_ = pvcs.Informer().GetIndexer().Add(claim("once", corev1.ReadWriteOncePod))
			_ = pvcs.Informer().GetIndexer().Add(claim("many", corev1.ReadWriteOnce))
			_ = pvcs.Informer().GetIndexer().Add(claim("other", corev1.ReadWriteOncePod))
			h := framework.NewHandle(framework.Listers{PersistentVolumeClaims: pvcs.Lister()})
			ni := framework.NewNodeInfo(tt.running...)
			ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
			h.SetSnapshot(framework.NewSnapshot([]*framework.NodeInfo{ni}))
			pl, _ := New(h)
			st := pl.(*VolumeRestrictions).PreFilter(context.Background(), framework.NewCycleState(), tt.pod)
			got := ""
			if !st.IsSuccess() {
				got = st.Code().String() + ": " + st.Message()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
