package volumebinding

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"skiff.dev/scheduler/pkg/framework"
)

func node(name string) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}})
	return ni
}

func claim(name, class, volume string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + "c"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), VolumeName: volume,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	if volume != "" {
		c.Status.Phase = corev1.ClaimBound
	}
	return c
}

func volume(name, class, size, onNode string) *corev1.PersistentVolume {
	v := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
	if onNode != "" {
		v.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{onNode}}}}}}}
	}
	return v
}

func class(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

func podWith(claims ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "pod-uid"}}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func newPlugin(t *testing.T, objs ...runtime.Object) (*VolumeBinding, *fake.Clientset, cache.Indexer) {
	t.Helper()
	client := fake.NewSimpleClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	pvcs, pvs, scs := f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes(), f.Storage().V1().StorageClasses()
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.PersistentVolumeClaim:
			_ = pvcs.Informer().GetIndexer().Add(o)
		case *corev1.PersistentVolume:
			_ = pvs.Informer().GetIndexer().Add(o)
		case *storagev1.StorageClass:
			_ = scs.Informer().GetIndexer().Add(o)
		}
	}
	h := framework.NewHandle(framework.Listers{PersistentVolumeClaims: pvcs.Lister(), PersistentVolumes: pvs.Lister(), StorageClasses: scs.Lister()})
	pl, err := New(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	b := pl.(*VolumeBinding)
	b.client = client
	return b, client, pvcs.Informer().GetIndexer()
}

func TestPreFilterAndFilter(t *testing.T) {
	wffc := class("local-path", "skiff.dev/local-path", storagev1.VolumeBindingWaitForFirstConsumer)
	static := class("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
	immediate := class("fast", "example.com/fast", storagev1.VolumeBindingImmediate)
	tests := []struct {
		name          string
		pod           *corev1.Pod
		objs          []runtime.Object
		wantPreFilter string // "" success, else code: message
		wantFilter    map[string]string
	}{
		{name: "no claims: skip", pod: podWith(), wantPreFilter: "Skip: "},
		{name: "missing claim", pod: podWith("data"), wantPreFilter: `UnschedulableAndUnresolvable: persistentvolumeclaim "data" not found`},
		{name: "unbound Immediate claim", pod: podWith("data"), objs: []runtime.Object{immediate, claim("data", "fast", "")},
			wantPreFilter: "UnschedulableAndUnresolvable: pod has unbound immediate PersistentVolumeClaims"},
		{name: "bound to a volume of node n1: only n1", pod: podWith("data"),
			objs:       []runtime.Object{claim("data", "local-path", "pv1"), volume("pv1", "local-path", "1Gi", "n1")},
			wantFilter: map[string]string{"n1": "", "n2": "UnschedulableAndUnresolvable: " + ErrReasonNodeConflict}},
		{name: "WaitForFirstConsumer with a provisioner: any node", pod: podWith("data"),
			objs:       []runtime.Object{wffc, claim("data", "local-path", "")},
			wantFilter: map[string]string{"n1": "", "n2": ""}},
		{name: "WaitForFirstConsumer, static volumes only: the node that has one", pod: podWith("data"),
			objs:       []runtime.Object{static, claim("data", "local", ""), volume("small", "local", "500Mi", "n2"), volume("ok", "local", "2Gi", "n1")},
			wantFilter: map[string]string{"n1": "", "n2": "UnschedulableAndUnresolvable: " + ErrReasonBindConflict}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _, _ := newPlugin(t, tt.objs...)
			state := framework.NewCycleState()
			st := b.PreFilter(context.Background(), state, tt.pod)
			if got := statusString(st); got != tt.wantPreFilter {
				t.Fatalf("PreFilter %q, want %q", got, tt.wantPreFilter)
			}
			for n, want := range tt.wantFilter {
				if got := statusString(b.Filter(context.Background(), state, tt.pod, node(n))); got != want {
					t.Errorf("Filter(%s) %q, want %q", n, got, want)
				}
			}
		})
	}
}

func statusString(st *framework.Status) string {
	if st.IsSuccess() {
		return ""
	}
	return st.Code().String() + ": " + st.Message()
}

func TestPreBind(t *testing.T) {
	t.Run("provisioning: selected-node written, waits for Bound", func(t *testing.T) {
		wffc := class("local-path", "skiff.dev/local-path", storagev1.VolumeBindingWaitForFirstConsumer)
		pvc := claim("data", "local-path", "")
		b, client, claims := newPlugin(t, wffc, pvc)
		state := framework.NewCycleState()
		pod := podWith("data")
		if st := b.PreFilter(context.Background(), state, pod); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		if st := b.Filter(context.Background(), state, pod, node("n1")); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		if st := b.Reserve(context.Background(), state, pod, "n1"); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		b.timeout = 300 * time.Millisecond
		st := b.PreBind(context.Background(), state, pod, "n1")
		if st.IsSuccess() {
			t.Fatal("PreBind succeeded before the claim was bound")
		}
		got, _ := client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "data", metav1.GetOptions{})
		if got.Annotations[annSelectedNode] != "n1" {
			t.Fatalf("annotations %v", got.Annotations)
		}
		// The binder bound it: PreBind now passes.
		if err := claims.Update(claim("data", "local-path", "pvc-1")); err != nil {
			t.Fatal(err)
		}
		if st := b.PreBind(context.Background(), state, pod, "n1"); !st.IsSuccess() {
			t.Fatalf("PreBind after binding: %s", st.Message())
		}
	})
	t.Run("static volume: claimRef written to the volume chosen for the node", func(t *testing.T) {
		static := class("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
		pvc := claim("data", "local", "")
		b, client, claims := newPlugin(t, static, pvc, volume("ok", "local", "2Gi", "n1"))
		state := framework.NewCycleState()
		pod := podWith("data")
		_ = b.PreFilter(context.Background(), state, pod)
		if st := b.Filter(context.Background(), state, pod, node("n1")); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		_ = b.Reserve(context.Background(), state, pod, "n1")
		if err := claims.Update(claim("data", "local", "ok")); err != nil {
			t.Fatal(err)
		}
		if st := b.PreBind(context.Background(), state, pod, "n1"); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		v, _ := client.CoreV1().PersistentVolumes().Get(context.Background(), "ok", metav1.GetOptions{})
		if v.Spec.ClaimRef == nil || v.Spec.ClaimRef.Name != "data" || v.Annotations[annBoundByController] != "yes" {
			t.Fatalf("volume %+v", v)
		}
	})
}
