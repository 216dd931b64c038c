package persistentvolume

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

type fixture struct {
	client   *fake.Clientset
	c        *Controller
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{client: fake.NewSimpleClientset(objs...), recorder: record.NewFakeRecorder(100)}
	factory := informers.NewSharedInformerFactory(f.client, 0)
	pvs, pvcs, scs, pods := factory.Core().V1().PersistentVolumes(), factory.Core().V1().PersistentVolumeClaims(),
		factory.Storage().V1().StorageClasses(), factory.Core().V1().Pods()
	c, err := NewController(f.client, pvs, pvcs, scs, pods, f.recorder, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.PersistentVolume:
			_ = pvs.Informer().GetIndexer().Add(o)
		case *corev1.PersistentVolumeClaim:
			_ = pvcs.Informer().GetIndexer().Add(o)
		case *storagev1.StorageClass:
			_ = scs.Informer().GetIndexer().Add(o)
		case *corev1.Pod:
			_ = pods.Informer().GetIndexer().Add(o)
		}
	}
	return f
}

func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.client.Actions() {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		if o, ok := a.(core.UpdateAction); ok {
			s += " " + o.GetObject().(metav1.Object).GetName()
		}
		out = append(out, s)
	}
	return out
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func pv(name, size, class string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolume {
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid")},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   modes,
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
}

func pvc(name, size string, class *string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

func class(name, provisioner string, mode storagev1.VolumeBindingMode, isDefault bool) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       provisioner,
		VolumeBindingMode: &mode,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
	}
	if isDefault {
		sc.Annotations = map[string]string{annDefaultClass: "true"}
	}
	return sc
}

func boundTo(v *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	v.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID}
	v.Status.Phase = corev1.VolumeBound
	return v
}

func bound(c *corev1.PersistentVolumeClaim, volume string) *corev1.PersistentVolumeClaim {
	c.Spec.VolumeName = volume
	c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
	c.Status.Phase = corev1.ClaimBound
	return c
}

func with[T any](o T, f func(T)) T { f(o); return o }

func TestSyncClaim(t *testing.T) {
	slow := ptr.To("slow")
	bindActions := func(v, c string) []string {
		return []string{"update persistentvolumes " + v, "update persistentvolumes/status " + v,
			"update persistentvolumeclaims " + c, "update persistentvolumeclaims/status " + c}
	}
	tests := []struct {
		name        string
		claim       *corev1.PersistentVolumeClaim
		objs        []runtime.Object
		wantActions []string
		wantEvents  []string
		check       func(t *testing.T, f *fixture)
	}{
		{
			name:        "no class, no volume: FailedBinding and Pending",
			claim:       with(pvc("c", "1Gi", ptr.To("")), func(c *corev1.PersistentVolumeClaim) { c.Status.Phase = "" }),
			wantActions: []string{"update persistentvolumeclaims/status c"},
			wantEvents:  []string{"Normal FailedBinding no persistent volumes available for this claim and no storage class is set"},
		},
		{
			name:        "smallest volume that fits, of the same class",
			claim:       pvc("c", "3Gi", slow),
			objs:        []runtime.Object{pv("big", "10Gi", "slow"), pv("small", "1Gi", "slow"), pv("mid", "5Gi", "slow"), pv("other", "4Gi", "fast")},
			wantActions: bindActions("mid", "c"),
			check: func(t *testing.T, f *fixture) {
				v, _ := f.client.CoreV1().PersistentVolumes().Get(context.Background(), "mid", metav1.GetOptions{})
				if v.Spec.ClaimRef == nil || v.Spec.ClaimRef.UID != "c-uid" || v.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" || v.Status.Phase != corev1.VolumeBound {
					t.Errorf("volume not bound: %+v %v %v", v.Spec.ClaimRef, v.Annotations, v.Status.Phase)
				}
				c, _ := f.client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "c", metav1.GetOptions{})
				if c.Spec.VolumeName != "mid" || c.Annotations["pv.kubernetes.io/bind-completed"] != "yes" ||
					c.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" || c.Status.Phase != corev1.ClaimBound {
					t.Errorf("claim not bound: %q %v %v", c.Spec.VolumeName, c.Annotations, c.Status.Phase)
				}
				if q := c.Status.Capacity[corev1.ResourceStorage]; q.String() != "5Gi" {
					t.Errorf("capacity %s, want 5Gi", q.String())
				}
			},
		},
		{
			name:        "access modes must include the claim's",
			claim:       pvc("c", "1Gi", ptr.To(""), corev1.ReadWriteMany),
			objs:        []runtime.Object{pv("rwo", "1Gi", ""), pv("rwx", "2Gi", "", corev1.ReadWriteOnce, corev1.ReadWriteMany)},
			wantActions: bindActions("rwx", "c"),
		},
		{
			name: "selector must match the volume's labels",
			claim: with(pvc("c", "1Gi", ptr.To("")), func(c *corev1.PersistentVolumeClaim) {
				c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd"}}
			}),
			objs: []runtime.Object{pv("hdd", "1Gi", ""),
				with(pv("ssd", "2Gi", ""), func(v *corev1.PersistentVolume) { v.Labels = map[string]string{"disk": "ssd"} })},
			wantActions: bindActions("ssd", "c"),
		},
		{
			name:        "volumes of another phase are not matched",
			claim:       pvc("c", "1Gi", ptr.To("")),
			objs:        []runtime.Object{with(pv("released", "1Gi", ""), func(v *corev1.PersistentVolume) { v.Status.Phase = corev1.VolumeReleased })},
			wantActions: nil,
			wantEvents:  []string{"Normal FailedBinding no persistent volumes available for this claim and no storage class is set"},
		},
		{
			name:        "volumeName: the named volume is bound, not a smaller one",
			claim:       with(pvc("c", "1Gi", ptr.To("")), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "big" }),
			objs:        []runtime.Object{pv("small", "1Gi", ""), pv("big", "9Gi", "")},
			wantActions: bindActions("big", "c"),
			check: func(t *testing.T, f *fixture) {
				c, _ := f.client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "c", metav1.GetOptions{})
				if _, ok := c.Annotations["pv.kubernetes.io/bound-by-controller"]; ok {
					t.Error("a claim the user bound got bound-by-controller")
				}
			},
		},
		{
			name:       "volumeName too small: VolumeMismatch",
			claim:      with(pvc("c", "5Gi", ptr.To("")), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "small" }),
			objs:       []runtime.Object{pv("small", "1Gi", "")},
			wantEvents: []string{`Warning VolumeMismatch Cannot bind to requested volume "small": requested PV is too small`},
		},
		{
			name:       "volumeName bound to another claim: FailedBinding",
			claim:      with(pvc("c", "1Gi", ptr.To("")), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "v" }),
			objs:       []runtime.Object{boundTo(pv("v", "1Gi", ""), pvc("other", "1Gi", nil))},
			wantEvents: []string{`Warning FailedBinding volume "v" already bound to a different claim.`},
		},
		{
			name:  "volume pre-bound by claimRef name is bound to that claim",
			claim: pvc("c", "1Gi", ptr.To("")),
			objs: []runtime.Object{pv("free", "1Gi", ""), with(pv("pre", "3Gi", ""), func(v *corev1.PersistentVolume) {
				v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "c"}
			})},
			wantActions: bindActions("pre", "c"),
		},
		{
			name:        "WaitForFirstConsumer: no binding before the scheduler chose a node",
			claim:       pvc("c", "1Gi", ptr.To("local")),
			objs:        []runtime.Object{class("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer, false), pv("v", "1Gi", "local")},
			wantActions: nil,
			wantEvents:  []string{"Normal WaitForFirstConsumer waiting for first consumer to be created before binding"},
		},
		{
			name:  "WaitForFirstConsumer with a pending pod names the pod",
			claim: pvc("c", "1Gi", ptr.To("local")),
			objs: []runtime.Object{class("local", "skiff.dev/local-path", storagev1.VolumeBindingWaitForFirstConsumer, false),
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
					Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}}}},
			wantEvents: []string{"Normal WaitForPodScheduled waiting for pod web to be scheduled"},
		},
		{
			name: "selected node: handed to the external provisioner",
			claim: with(pvc("c", "1Gi", ptr.To("local")), func(c *corev1.PersistentVolumeClaim) {
				c.Annotations = map[string]string{"volume.kubernetes.io/selected-node": "n1"}
			}),
			objs:        []runtime.Object{class("local", "skiff.dev/local-path", storagev1.VolumeBindingWaitForFirstConsumer, false)},
			wantActions: []string{"update persistentvolumeclaims c"},
			wantEvents: []string{"Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'skiff.dev/local-path' " +
				"or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."},
			check: func(t *testing.T, f *fixture) {
				c, _ := f.client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "c", metav1.GetOptions{})
				if c.Annotations["volume.kubernetes.io/storage-provisioner"] != "skiff.dev/local-path" ||
					c.Annotations["volume.beta.kubernetes.io/storage-provisioner"] != "skiff.dev/local-path" {
					t.Errorf("annotations %v", c.Annotations)
				}
			},
		},
		{
			name:  "a provisioned volume pre-bound to the claim's UID is bound",
			claim: pvc("c", "1Gi", ptr.To("local")),
			objs: []runtime.Object{class("local", "skiff.dev/local-path", storagev1.VolumeBindingWaitForFirstConsumer, false),
				with(pv("pvc-c-uid", "1Gi", "local"), func(v *corev1.PersistentVolume) {
					v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "c", UID: "c-uid"}
					v.Status.Phase = corev1.VolumePending
				})},
			wantActions: []string{"update persistentvolumes/status pvc-c-uid", "update persistentvolumeclaims c", "update persistentvolumeclaims/status c"},
		},
		{
			name:        "Immediate class with a provisioner: handed over without waiting",
			claim:       pvc("c", "1Gi", ptr.To("fast")),
			objs:        []runtime.Object{class("fast", "example.com/fast", storagev1.VolumeBindingImmediate, false)},
			wantActions: []string{"update persistentvolumeclaims c"},
			wantEvents: []string{"Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'example.com/fast' " +
				"or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."},
		},
		{
			name:       "class that does not exist: ProvisioningFailed",
			claim:      pvc("c", "1Gi", ptr.To("gold")),
			wantEvents: []string{`Warning ProvisioningFailed storageclass.storage.k8s.io "gold" not found`},
		},
		{
			name:        "no class at all: the default class is assigned",
			claim:       pvc("c", "1Gi", nil),
			objs:        []runtime.Object{class("local-path", "skiff.dev/local-path", storagev1.VolumeBindingWaitForFirstConsumer, true)},
			wantActions: []string{"update persistentvolumeclaims c"},
			check: func(t *testing.T, f *fixture) {
				c, _ := f.client.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "c", metav1.GetOptions{})
				if ptr.Deref(c.Spec.StorageClassName, "") != "local-path" {
					t.Errorf("class %v", c.Spec.StorageClassName)
				}
			},
		},
		{
			name:        "bound claim whose volume is gone is Lost",
			claim:       bound(pvc("c", "1Gi", ptr.To("")), "gone"),
			wantActions: []string{"update persistentvolumeclaims/status c"},
			wantEvents:  []string{"Warning ClaimLost Bound claim has lost its PersistentVolume. Data on the volume is lost!"},
		},
		{
			name:        "bound claim whose volume is bound to another claim is Lost",
			claim:       bound(pvc("c", "1Gi", ptr.To("")), "v"),
			objs:        []runtime.Object{boundTo(pv("v", "1Gi", ""), pvc("other", "1Gi", nil))},
			wantActions: []string{"update persistentvolumeclaims/status c"},
			wantEvents:  []string{"Warning ClaimMisbound Two claims are bound to the same volume, this one is bound incorrectly"},
		},
		{
			name: "bound claim and volume in step: nothing to do",
			claim: with(bound(pvc("c", "1Gi", ptr.To("")), "v"), func(c *corev1.PersistentVolumeClaim) {
				c.Status.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
				c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
			}),
			objs: []runtime.Object{boundTo(pv("v", "1Gi", ""), pvc("c", "1Gi", nil))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, append(tt.objs, tt.claim)...)
			f.client.ClearActions()
			if err := f.c.sync(context.Background(), claimKeyPrefix+"default/"+tt.claim.Name); err != nil {
				t.Fatal(err)
			}
			if got := f.actions(); !slices.Equal(got, tt.wantActions) {
				t.Errorf("actions:\n got %q\nwant %q", got, tt.wantActions)
			}
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.wantEvents)
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

func TestSyncVolume(t *testing.T) {
	claim := pvc("c", "1Gi", ptr.To(""))
	tests := []struct {
		name        string
		volume      *corev1.PersistentVolume
		objs        []runtime.Object
		wantPhase   corev1.PersistentVolumePhase
		wantActions []string
		wantEvents  []string
	}{
		{
			name:        "no claimRef: Available",
			volume:      with(pv("v", "1Gi", ""), func(v *corev1.PersistentVolume) { v.Status.Phase = corev1.VolumePending }),
			wantPhase:   corev1.VolumeAvailable,
			wantActions: []string{"update persistentvolumes/status v"},
		},
		{
			name:      "claim bound to it: Bound",
			volume:    with(boundTo(pv("v", "1Gi", ""), claim), func(v *corev1.PersistentVolume) { v.Status.Phase = corev1.VolumeAvailable }),
			objs:      []runtime.Object{bound(pvc("c", "1Gi", ptr.To("")), "v")},
			wantPhase: corev1.VolumeBound, wantActions: []string{"update persistentvolumes/status v"},
		},
		{
			name:        "claim gone, Retain: Released and kept",
			volume:      boundTo(pv("v", "1Gi", ""), claim),
			wantPhase:   corev1.VolumeReleased,
			wantActions: []string{"update persistentvolumes/status v"},
		},
		{
			name:        "claim deleted and made again with its name: Released",
			volume:      boundTo(pv("v", "1Gi", ""), claim),
			objs:        []runtime.Object{with(pvc("c", "1Gi", ptr.To("")), func(c *corev1.PersistentVolumeClaim) { c.UID = "new" })},
			wantPhase:   corev1.VolumeReleased,
			wantActions: []string{"update persistentvolumes/status v"},
		},
		{
			name: "claim gone, Delete, provisioned: Released, left to its provisioner",
			volume: with(boundTo(pv("v", "1Gi", "local-path"), claim), func(v *corev1.PersistentVolume) {
				v.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
				v.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": "skiff.dev/local-path"}
			}),
			wantPhase:   corev1.VolumeReleased,
			wantActions: []string{"update persistentvolumes/status v"},
		},
		{
			name: "claim gone, Delete, static: Failed with VolumeFailedDelete",
			volume: with(boundTo(pv("v", "1Gi", ""), claim), func(v *corev1.PersistentVolume) {
				v.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
			}),
			wantPhase:   corev1.VolumeFailed,
			wantActions: []string{"update persistentvolumes/status v", "update persistentvolumes/status v"},
			wantEvents:  []string{`Warning VolumeFailedDelete error getting deleter volume plugin for volume "v": no deletable volume plugin matched`},
		},
		{
			name: "bound by the controller to a claim bound elsewhere: unbound",
			volume: with(boundTo(pv("v", "1Gi", ""), claim), func(v *corev1.PersistentVolume) {
				v.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
			}),
			objs:        []runtime.Object{bound(pvc("c", "1Gi", ptr.To("")), "other")},
			wantPhase:   corev1.VolumeAvailable,
			wantActions: []string{"update persistentvolumes v", "update persistentvolumes/status v"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, append(tt.objs, tt.volume)...)
			f.client.ClearActions()
			if err := f.c.sync(context.Background(), volumeKeyPrefix+tt.volume.Name); err != nil {
				t.Fatal(err)
			}
			if got := f.actions(); !slices.Equal(got, tt.wantActions) {
				t.Errorf("actions:\n got %q\nwant %q", got, tt.wantActions)
			}
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.wantEvents)
			}
			v, _ := f.client.CoreV1().PersistentVolumes().Get(context.Background(), tt.volume.Name, metav1.GetOptions{})
			if v.Status.Phase != tt.wantPhase {
				t.Errorf("phase %q, want %q", v.Status.Phase, tt.wantPhase)
			}
		})
	}
}

func TestClaimNames(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}}}
	if got := strings.Join(ClaimNames(pod), ","); got != "data,p-scratch" {
		t.Errorf("got %q", got)
	}
}
