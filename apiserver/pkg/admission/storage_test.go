package admission

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// classObjects serves a fixed list of StorageClasses.
type classObjects []runtime.Object

func (c classObjects) Get(context.Context, string, string, string, string) (runtime.Object, error) {
	return nil, nil
}

func (c classObjects) List(_ context.Context, group, resource, _ string) ([]runtime.Object, error) {
	if group != "storage.k8s.io" || resource != "storageclasses" {
		return nil, nil
	}
	return c, nil
}

func storageClass(name string, isDefault bool, age time.Duration) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name,
		CreationTimestamp: metav1.NewTime(time.Unix(1_700_000_000, 0).Add(-age))}, Provisioner: "p"}
	if isDefault {
		sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	}
	return sc
}

func TestDefaultStorageClass(t *testing.T) {
	tests := []struct {
		name    string
		classes classObjects
		claim   *string
		want    *string
	}{
		{name: "no class gets the default", classes: classObjects{storageClass("a", false, 0), storageClass("local-path", true, time.Hour)}, want: ptr.To("local-path")},
		{name: "the newest of two defaults", classes: classObjects{storageClass("old", true, time.Hour), storageClass("new", true, 0)}, want: ptr.To("new")},
		{name: "no default: left nil", classes: classObjects{storageClass("a", false, 0)}, want: nil},
		{name: "empty class is kept", classes: classObjects{storageClass("d", true, 0)}, claim: ptr.To(""), want: ptr.To("")},
		{name: "named class is kept", classes: classObjects{storageClass("d", true, 0)}, claim: ptr.To("fast"), want: ptr.To("fast")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"},
				Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: tt.claim}}
			a := &Attributes{Operation: Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"},
				Namespace: "default", Name: "c", Object: pvc}
			if err := (&DefaultStorageClass{Objects: tt.classes}).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if !ptr.Equal(pvc.Spec.StorageClassName, tt.want) {
				t.Errorf("class %v, want %v", ptr.Deref(pvc.Spec.StorageClassName, "<nil>"), ptr.Deref(tt.want, "<nil>"))
			}
		})
	}
}

func TestStorageObjectInUseProtection(t *testing.T) {
	tests := []struct {
		name     string
		resource string
		op       Operation
		obj      runtime.Object
		want     []string
	}{
		{name: "claim", resource: "persistentvolumeclaims", op: Create, obj: &corev1.PersistentVolumeClaim{}, want: []string{"kubernetes.io/pvc-protection"}},
		{name: "volume", resource: "persistentvolumes", op: Create, obj: &corev1.PersistentVolume{}, want: []string{"kubernetes.io/pv-protection"}},
		{name: "already there", resource: "persistentvolumes", op: Create,
			obj: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"kubernetes.io/pv-protection"}}}, want: []string{"kubernetes.io/pv-protection"}},
		{name: "update leaves it", resource: "persistentvolumeclaims", op: Update, obj: &corev1.PersistentVolumeClaim{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Attributes{Operation: tt.op, Resource: schema.GroupVersionResource{Version: "v1", Resource: tt.resource}, Object: tt.obj}
			if err := (&StorageObjectInUseProtection{}).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if got := tt.obj.(metav1.Object).GetFinalizers(); !slices.Equal(got, tt.want) {
				t.Errorf("finalizers %v, want %v", got, tt.want)
			}
		})
	}
}

// oneClass serves one StorageClass by name.
type oneClass struct{ sc *storagev1.StorageClass }

func (o oneClass) Get(_ context.Context, group, resource, _, name string) (runtime.Object, error) {
	if o.sc != nil && group == "storage.k8s.io" && resource == "storageclasses" && name == o.sc.Name {
		return o.sc, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: resource}, name)
}

func (o oneClass) List(context.Context, string, string, string) ([]runtime.Object, error) {
	return nil, nil
}

func TestPersistentVolumeClaimResize(t *testing.T) {
	claim := func(size string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("sc"),
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	class := func(allow *bool) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc"}, AllowVolumeExpansion: allow}
	}
	tests := []struct {
		name     string
		sc       *storagev1.StorageClass
		old, new *corev1.PersistentVolumeClaim
		wantErr  bool
	}{
		{name: "class allows", sc: class(ptr.To(true)), old: claim("1Gi", corev1.ClaimBound), new: claim("2Gi", corev1.ClaimBound)},
		{name: "class does not allow", sc: class(nil), old: claim("1Gi", corev1.ClaimBound), new: claim("2Gi", corev1.ClaimBound), wantErr: true},
		{name: "class gone", old: claim("1Gi", corev1.ClaimBound), new: claim("2Gi", corev1.ClaimBound), wantErr: true},
		{name: "not bound: not a resize", sc: class(nil), old: claim("1Gi", corev1.ClaimPending), new: claim("2Gi", corev1.ClaimPending)},
		{name: "same size", sc: class(nil), old: claim("1Gi", corev1.ClaimBound), new: claim("1Gi", corev1.ClaimBound)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Attributes{Operation: Update, Resource: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"},
				Namespace: "default", Name: "c", Object: tt.new, OldObject: tt.old}
			err := (&PersistentVolumeClaimResize{Objects: oneClass{tt.sc}}).Validate(context.Background(), a)
			if (err != nil) != tt.wantErr {
				t.Errorf("err %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
