package volumezone

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"skiff.dev/scheduler/pkg/framework"
)

func TestVolumeZone(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	pvcs, pvs := f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes()
	_ = pvcs.Informer().GetIndexer().Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv"}})
	_ = pvcs.Informer().GetIndexer().Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "unbound", Namespace: "default"}})
	_ = pvs.Informer().GetIndexer().Add(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv",
		Labels: map[string]string{corev1.LabelTopologyZone: "a__b"}}})
	h := framework.NewHandle(framework.Listers{PersistentVolumeClaims: pvcs.Lister(), PersistentVolumes: pvs.Lister()})
	pl, _ := New(h)
	z := pl.(*VolumeZone)
	pod := func(claim string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v",
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}}}
	}
	node := func(zone string) *framework.NodeInfo {
		ni := framework.NewNodeInfo()
		labels := map[string]string{}
		if zone != "" {
			labels[corev1.LabelTopologyZone] = zone
		}
		ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-" + zone, Labels: labels}})
		return ni
	}
	tests := []struct {
		name  string
		claim string
		zone  string
		want  string
	}{
		{name: "zone listed", claim: "data", zone: "b", want: ""},
		{name: "other zone", claim: "data", zone: "c", want: ErrReasonConflict},
		{name: "node without zone", claim: "data", zone: "", want: ErrReasonConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState()
			if st := z.PreFilter(context.Background(), state, pod(tt.claim)); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			if got := z.Filter(context.Background(), state, pod(tt.claim), node(tt.zone)).Message(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if st := z.PreFilter(context.Background(), framework.NewCycleState(), pod("unbound")); !st.IsSkip() {
		t.Errorf("an unbound claim: %v", st.Code())
	}
}
