package validation

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

func ns(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "default"} }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestValidateNewKindsCreate(t *testing.T) {
	podTmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	tests := []struct {
		name string
		obj  runtime.Object
		want []want
		msg  string
	}{
		{name: "limitrange min over max", obj: &corev1.LimitRange{ObjectMeta: ns("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer, Min: corev1.ResourceList{"cpu": q("2")}, Max: corev1.ResourceList{"cpu": q("1")}}}}},
			want: []want{{field.ErrorTypeInvalid, "spec.limits[0].min[cpu]"}, {field.ErrorTypeInvalid, "spec.limits[0].default[cpu]"}, {field.ErrorTypeInvalid, "spec.limits[0].defaultRequest[cpu]"}},
			msg:  "min value 2 is greater than max value 1"},
		{name: "limitrange pod defaults", obj: &corev1.LimitRange{ObjectMeta: ns("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, Default: corev1.ResourceList{"cpu": q("1")}}}}},
			want: []want{{field.ErrorTypeForbidden, "spec.limits[0].default"}}, msg: "may not be specified when `type` is 'Pod'"},
		{name: "limitrange ratio under one", obj: &corev1.LimitRange{ObjectMeta: ns("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: corev1.ResourceList{"cpu": q("500m")}}}}},
			want: []want{{field.ErrorTypeInvalid, "spec.limits[0].maxLimitRequestRatio[cpu]"}}, msg: "ratio 500m is less than 1"},
		{name: "resourcequota bad name", obj: &corev1.ResourceQuota{ObjectMeta: ns("rq"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"bananas": q("1")}}},
			want: []want{{field.ErrorTypeInvalid, "spec.hard[bananas]"}}},
		{name: "rc without template", obj: &corev1.ReplicationController{ObjectMeta: ns("rc"), Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"a": "b"}}},
			want: []want{{field.ErrorTypeRequired, "spec.template"}}},
		{name: "pv without source", obj: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{"storage": q("1Gi")}, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}},
			want: []want{{field.ErrorTypeRequired, "spec"}}, msg: "must specify a volume type"},
		{name: "pvc without storage", obj: &corev1.PersistentVolumeClaim{ObjectMeta: ns("c"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}},
			want: []want{{field.ErrorTypeRequired, "spec.resources[storage]"}}},
		{name: "priorityclass reserved prefix", obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-x"}, Value: 1},
			want: []want{{field.ErrorTypeForbidden, "metadata.name"}}, msg: "priority class names with 'system-' prefix are reserved for system use only"},
		{name: "builtin priorityclass", obj: SystemPriorityClasses()[0]},
		{name: "runtimeclass bad handler", obj: &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Handler: "Not_A_Label"},
			want: []want{{field.ErrorTypeInvalid, "handler"}}},
		{name: "statefulset bad policy", obj: &appsv1.StatefulSet{ObjectMeta: ns("s"), Spec: appsv1.StatefulSetSpec{PodManagementPolicy: "Random",
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, Template: podTmpl}},
			want: []want{{field.ErrorTypeInvalid, "spec.podManagementPolicy"}}},
		{name: "job with restart always", obj: &batchv1.Job{ObjectMeta: ns("j"), Spec: batchv1.JobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, Template: podTmpl}},
			want: []want{{field.ErrorTypeRequired, "spec.template.spec.restartPolicy"}}},
		{name: "cronjob bad schedule", obj: &batchv1.CronJob{ObjectMeta: ns("cj"), Spec: batchv1.CronJobSpec{Schedule: "61 * * * *", ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: withRestart(podTmpl, corev1.RestartPolicyNever)}}}},
			want: []want{{field.ErrorTypeInvalid, "spec.schedule"}}, msg: "end of range (61) above maximum (59)"},
		{name: "cronjob long name", obj: &batchv1.CronJob{ObjectMeta: ns(strings.Repeat("a", 53)), Spec: batchv1.CronJobSpec{Schedule: "@daily", ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: withRestart(podTmpl, corev1.RestartPolicyNever)}}}},
			want: []want{{field.ErrorTypeInvalid, "metadata.name"}}, msg: "must be no more than 52 characters"},
		{name: "pdb both set", obj: &policyv1.PodDisruptionBudget{ObjectMeta: ns("p"), Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
			want: []want{{field.ErrorTypeInvalid, "spec"}}, msg: "minAvailable and maxUnavailable cannot be both set"},
		{name: "ingress without backend or rules", obj: &networkingv1.Ingress{ObjectMeta: ns("i")},
			want: []want{{field.ErrorTypeInvalid, "spec"}}, msg: "either `defaultBackend` or `rules` must be specified"},
		{name: "ingressclass controller", obj: &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: networkingv1.IngressClassSpec{Controller: "nodomain"}},
			want: []want{{field.ErrorTypeInvalid, "spec.controller"}}},
		{name: "storageclass without provisioner", obj: &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "s"}, VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)},
			want: []want{{field.ErrorTypeRequired, "provisioner"}}},
		{name: "volumeattachment two sources", obj: &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "v"}, Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "a", NodeName: "n", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv"), InlineVolumeSpec: &corev1.PersistentVolumeSpec{}}}},
			want: []want{{field.ErrorTypeForbidden, "spec.source"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defaults.Default(tc.obj)
			errs := ValidateCreate(tc.obj)
			checkErrs(t, errs, tc.want)
			if tc.msg != "" && !strings.Contains(errs.ToAggregate().Error(), tc.msg) {
				t.Errorf("message %q not in %v", tc.msg, errs)
			}
		})
	}
}

func withRestart(t corev1.PodTemplateSpec, p corev1.RestartPolicy) corev1.PodTemplateSpec {
	t.Spec.RestartPolicy = p
	return t
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
	defaults.Default(sts)
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
			errs := ValidateUpdate(tc.obj, tc.old)
			if !strings.Contains(errs.ToAggregate().Error(), tc.msg) {
				t.Errorf("errors %v lack %q", errs, tc.msg)
			}
		})
	}
}

func TestCronSchedules(t *testing.T) {
	for s, ok := range map[string]bool{"*/5 * * * *": true, "0 0 1 jan mon": true, "@hourly": true, "@every 5m": true,
		"* * * *": false, "0 25 * * *": false, "@sometimes": false, "5-1 * * * *": false, "a * * * *": false} {
		if err := checkCronSchedule(s); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", s, err, ok)
		}
	}
}
