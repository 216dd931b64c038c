// The kinds' validation as their registry packages run it: through the rows
// of the resource table (registry.Validate, registry.Default).
package validation_test

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	. "skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry"
)

// allKinds returns a fresh zero value of every kind validated through the
// resource table.
func allKinds() []runtime.Object {
	return []runtime.Object{
		&corev1.Namespace{}, &corev1.Pod{}, &corev1.Node{}, &corev1.Service{}, &corev1.Endpoints{},
		&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Event{}, &corev1.ServiceAccount{},
		&appsv1.ReplicaSet{}, &appsv1.Deployment{}, &coordinationv1.Lease{},
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
			if errs := registry.Validate(obj); len(errs) == 0 {
				t.Errorf("zero %T validated without errors", obj)
			}
			old := obj.DeepCopyObject()
			_ = registry.ValidateUpdate(obj, old)
			registry.Default(obj)
			_ = registry.Validate(obj)
			_ = registry.ValidateUpdate(obj, old)
		})
	}
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
			_ = registry.Validate(obj)
			_ = registry.ValidateUpdate(obj, old)
			registry.Default(obj)
			_ = registry.Validate(obj)
			_ = registry.ValidateUpdate(obj, old)
			_ = registry.ValidateUpdate(old, obj)
		}
	}
}

func TestValidateNewKindsCreate(t *testing.T) {
	podTmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	tests := []struct {
		name string
		obj  runtime.Object
		want []Want
		msg  string
	}{
		{name: "limitrange min over max", obj: &corev1.LimitRange{ObjectMeta: NS("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer, Min: corev1.ResourceList{"cpu": Q("2")}, Max: corev1.ResourceList{"cpu": Q("1")}}}}},
			want: []Want{{field.ErrorTypeInvalid, "spec.limits[0].min[cpu]"}, {field.ErrorTypeInvalid, "spec.limits[0].default[cpu]"}, {field.ErrorTypeInvalid, "spec.limits[0].defaultRequest[cpu]"}},
			msg:  "min value 2 is greater than max value 1"},
		{name: "limitrange pod defaults", obj: &corev1.LimitRange{ObjectMeta: NS("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, Default: corev1.ResourceList{"cpu": Q("1")}}}}},
			want: []Want{{field.ErrorTypeForbidden, "spec.limits[0].default"}}, msg: "may not be specified when `type` is 'Pod'"},
		{name: "limitrange ratio under one", obj: &corev1.LimitRange{ObjectMeta: NS("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: corev1.ResourceList{"cpu": Q("500m")}}}}},
			want: []Want{{field.ErrorTypeInvalid, "spec.limits[0].maxLimitRequestRatio[cpu]"}}, msg: "ratio 500m is less than 1"},
		{name: "resourcequota bad name", obj: &corev1.ResourceQuota{ObjectMeta: NS("rq"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"bananas": Q("1")}}},
			want: []Want{{field.ErrorTypeInvalid, "spec.hard[bananas]"}}},
		{name: "rc without template", obj: &corev1.ReplicationController{ObjectMeta: NS("rc"), Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"a": "b"}}},
			want: []Want{{field.ErrorTypeRequired, "spec.template"}}},
		{name: "pv without source", obj: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{"storage": Q("1Gi")}, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}},
			want: []Want{{field.ErrorTypeRequired, "spec"}}, msg: "must specify a volume type"},
		{name: "pvc without storage", obj: &corev1.PersistentVolumeClaim{ObjectMeta: NS("c"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}},
			want: []Want{{field.ErrorTypeRequired, "spec.resources[storage]"}}},
		{name: "priorityclass reserved prefix", obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-x"}, Value: 1},
			want: []Want{{field.ErrorTypeForbidden, "metadata.name"}}, msg: "priority class names with 'system-' prefix are reserved for system use only"},
		{name: "builtin priorityclass", obj: SystemPriorityClasses()[0]},
		{name: "runtimeclass bad handler", obj: &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Handler: "Not_A_Label"},
			want: []Want{{field.ErrorTypeInvalid, "handler"}}},
		{name: "statefulset bad policy", obj: &appsv1.StatefulSet{ObjectMeta: NS("s"), Spec: appsv1.StatefulSetSpec{PodManagementPolicy: "Random",
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, Template: podTmpl}},
			want: []Want{{field.ErrorTypeInvalid, "spec.podManagementPolicy"}}},
		{name: "job with restart always", obj: &batchv1.Job{ObjectMeta: NS("j"), Spec: batchv1.JobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, Template: podTmpl}},
			want: []Want{{field.ErrorTypeRequired, "spec.template.spec.restartPolicy"}}},
		{name: "cronjob bad schedule", obj: &batchv1.CronJob{ObjectMeta: NS("cj"), Spec: batchv1.CronJobSpec{Schedule: "61 * * * *", ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: WithRestart(podTmpl, corev1.RestartPolicyNever)}}}},
			want: []Want{{field.ErrorTypeInvalid, "spec.schedule"}}, msg: "end of range (61) above maximum (59)"},
		{name: "cronjob long name", obj: &batchv1.CronJob{ObjectMeta: NS(strings.Repeat("a", 53)), Spec: batchv1.CronJobSpec{Schedule: "@daily", ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: WithRestart(podTmpl, corev1.RestartPolicyNever)}}}},
			want: []Want{{field.ErrorTypeInvalid, "metadata.name"}}, msg: "must be no more than 52 characters"},
		{name: "pdb both set", obj: &policyv1.PodDisruptionBudget{ObjectMeta: NS("p"), Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
			want: []Want{{field.ErrorTypeInvalid, "spec"}}, msg: "minAvailable and maxUnavailable cannot be both set"},
		{name: "ingress without backend or rules", obj: &networkingv1.Ingress{ObjectMeta: NS("i")},
			want: []Want{{field.ErrorTypeInvalid, "spec"}}, msg: "either `defaultBackend` or `rules` must be specified"},
		{name: "ingressclass controller", obj: &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: networkingv1.IngressClassSpec{Controller: "nodomain"}},
			want: []Want{{field.ErrorTypeInvalid, "spec.controller"}}},
		{name: "storageclass without provisioner", obj: &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "s"}, VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)},
			want: []Want{{field.ErrorTypeRequired, "provisioner"}}},
		{name: "volumeattachment two sources", obj: &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "v"}, Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "a", NodeName: "n", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv"), InlineVolumeSpec: &corev1.PersistentVolumeSpec{}}}},
			want: []Want{{field.ErrorTypeForbidden, "spec.source"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			registry.Default(tc.obj)
			errs := registry.Validate(tc.obj)
			CheckErrs(t, errs, tc.want)
			if tc.msg != "" && !strings.Contains(errs.ToAggregate().Error(), tc.msg) {
				t.Errorf("message %q not in %v", tc.msg, errs)
			}
		})
	}
}

func TestValidateNewKindsUpdate(t *testing.T) {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "1"}, Value: 10}
	pc2 := pc.DeepCopy()
	pc2.Value = 11
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "s", ResourceVersion: "1"}, Provisioner: "a/b", VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}
	sc2 := sc.DeepCopy()
	sc2.Parameters = map[string]string{"x": "y"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "d", ResourceVersion: "1"}, Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, Template: tmpl, ServiceName: "one"}}
	registry.Default(sts)
	sts2 := sts.DeepCopy()
	sts2.Spec.ServiceName = "two"
	tests := []struct {
		name     string
		obj, old runtime.Object
		msg      string
	}{
		{"priority value", pc2, pc, "may not be changed in an update."},
		{"storageclass parameters", sc2, sc, "updates to parameters are forbidden."},
		{"statefulset serviceName", sts2, sts, "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := registry.ValidateUpdate(tc.obj, tc.old)
			if !strings.Contains(errs.ToAggregate().Error(), tc.msg) {
				t.Errorf("errors %v lack %q", errs, tc.msg)
			}
		})
	}
}
