package validation

import (
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

// allKinds returns a fresh zero value of every kind this package validates.
func allKinds() []runtime.Object {
	return []runtime.Object{
		&corev1.Namespace{}, &corev1.Pod{}, &corev1.Node{}, &corev1.Service{}, &corev1.Endpoints{},
		&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Event{}, &corev1.ServiceAccount{},
		&appsv1.ReplicaSet{}, &appsv1.Deployment{}, &autoscalingv1.Scale{}, &coordinationv1.Lease{},
		&discoveryv1.EndpointSlice{}, &rbacv1.Role{}, &rbacv1.ClusterRole{}, &rbacv1.RoleBinding{},
		&rbacv1.ClusterRoleBinding{},
		&corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{}}}}, &corev1.ResourceQuota{},
		&corev1.ReplicationController{}, &corev1.PodTemplate{},
		&corev1.PersistentVolume{}, &corev1.PersistentVolumeClaim{}, &schedulingv1.PriorityClass{}, &nodev1.RuntimeClass{},
		&appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &appsv1.ControllerRevision{}, &batchv1.Job{}, &batchv1.CronJob{},
		&networkingv1.Ingress{}, &networkingv1.IngressClass{}, &networkingv1.NetworkPolicy{}, &policyv1.PodDisruptionBudget{},
		&eventsv1.Event{}, &storagev1.StorageClass{}, &storagev1.CSIDriver{}, &storagev1.CSINode{},
		&storagev1.CSIStorageCapacity{}, &storagev1.VolumeAttachment{}, &certificatesv1.CertificateSigningRequest{},
		&flowcontrolv1.FlowSchema{}, &flowcontrolv1.PriorityLevelConfiguration{},
	}
}

func TestZeroValuesDoNotPanic(t *testing.T) {
	for _, obj := range allKinds() {
		t.Run(reflect.TypeOf(obj).Elem().Name(), func(t *testing.T) {
			if errs := ValidateCreate(obj); len(errs) == 0 {
				t.Errorf("zero %T validated without errors", obj)
			}
			old := obj.DeepCopyObject()
			_ = ValidateUpdate(obj, old)
			defaults.Default(obj)
			_ = ValidateCreate(obj)
			_ = ValidateUpdate(obj, old)
		})
	}
}

func TestNilObjects(t *testing.T) {
	checkErrs(t, ValidateCreate(nil), []want{{field.ErrorTypeInternal, "[]"}})
	checkErrs(t, ValidateCreate((*corev1.Pod)(nil)), []want{{field.ErrorTypeInternal, "[]"}})
	checkErrs(t, ValidateUpdate((*appsv1.Deployment)(nil), &appsv1.Deployment{}), []want{{field.ErrorTypeInternal, "[]"}})
	checkErrs(t, ValidateUpdate(validPod(), (*corev1.Pod)(nil)), []want{{field.ErrorTypeInternal, "[]"}})
	checkErrs(t, ValidateUpdate(validPod(), nil), []want{{field.ErrorTypeInternal, "[]"}})
}

func TestUnknownAndMismatchedKinds(t *testing.T) {
	if errs := ValidateCreate(&corev1.ComponentStatus{}); errs != nil {
		t.Errorf("unknown kind: %v", errs)
	}
	if errs := ValidateUpdate(&corev1.ComponentStatus{}, &corev1.ComponentStatus{}); errs != nil {
		t.Errorf("unknown kind update: %v", errs)
	}
	checkErrs(t, ValidateUpdate(validPod(), &corev1.Service{}), []want{{field.ErrorTypeInternal, "[]"}})
}

// fill sets every settable pointer, slice and string-keyed map in v to a
// non-nil value holding zero values, depth levels deep, so that validation
// meets every optional field present but empty.
func fill(v reflect.Value, depth int) {
	if depth == 0 {
		return
	}
	switch v.Kind() {
	case reflect.Ptr:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if !v.IsNil() {
			fill(v.Elem(), depth-1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				fill(f, depth-1)
			}
		}
	case reflect.Slice:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), depth-1)
		}
	case reflect.Map:
		if v.IsNil() && v.CanSet() && v.Type().Key().Kind() == reflect.String {
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
			v.Set(m)
		}
	}
}

func TestFilledObjectsDoNotPanic(t *testing.T) {
	for _, depth := range []int{2, 4, 8, 12} {
		for _, obj := range allKinds() {
			fill(reflect.ValueOf(obj), depth)
			old := obj.DeepCopyObject()
			_ = ValidateCreate(obj)
			_ = ValidateUpdate(obj, old)
			defaults.Default(obj)
			_ = ValidateCreate(obj)
			_ = ValidateUpdate(obj, old)
			_ = ValidateUpdate(old, obj)
		}
	}
}

func TestDefaultedSeedObjectsAreValid(t *testing.T) {
	for _, obj := range []runtime.Object{validPod(), validReplicaSet(), validDeployment(), validService(), validNode(), validSlice()} {
		checkErrs(t, ValidateCreate(obj), nil)
	}
}

func TestNameValidatorFor(t *testing.T) {
	tests := []struct {
		gk      schema.GroupKind
		name    string
		valid   bool
		unknown bool
	}{
		{gk: schema.GroupKind{Kind: "Namespace"}, name: "a.b", valid: false},
		{gk: schema.GroupKind{Kind: "Namespace"}, name: "team-a", valid: true},
		{gk: schema.GroupKind{Kind: "Service"}, name: "1web", valid: false},
		{gk: schema.GroupKind{Kind: "Service"}, name: "web", valid: true},
		{gk: schema.GroupKind{Kind: "Pod"}, name: "web.v1", valid: true},
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, name: "Web", valid: false},
		{gk: schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"}, name: "system:node", valid: true},
		{gk: schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}, name: "a/b", valid: false},
		{gk: schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, name: "kube-scheduler", valid: true},
		{gk: schema.GroupKind{Group: "batch", Kind: "Job"}, unknown: true},
	}
	for _, tc := range tests {
		fn, ok := NameValidatorFor(tc.gk)
		if ok == tc.unknown {
			t.Errorf("%v: known = %v", tc.gk, ok)
			continue
		}
		if tc.unknown {
			continue
		}
		if got := len(fn(tc.name, false)) == 0; got != tc.valid {
			t.Errorf("%v %q: valid = %v, want %v", tc.gk, tc.name, got, tc.valid)
		}
	}
}
