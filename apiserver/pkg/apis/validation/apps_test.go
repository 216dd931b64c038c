package validation

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestValidateReplicaSetCreate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(rs *appsv1.ReplicaSet)
		want   []want
	}{
		{name: "valid seed replica set", mutate: func(rs *appsv1.ReplicaSet) {}},
		{name: "invalid name", mutate: func(rs *appsv1.ReplicaSet) { rs.Name = "My_RS" }, want: []want{inv("metadata.name")}},
		{name: "missing selector", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = nil },
			want: []want{req("spec.selector"), inv("spec.template.metadata.labels")}},
		{name: "empty selector", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = &metav1.LabelSelector{} },
			want: []want{inv("spec.selector")}},
		{name: "selector does not match template", mutate: func(rs *appsv1.ReplicaSet) {
			rs.Spec.Template.Labels = map[string]string{"app": "other"}
		}, want: []want{inv("spec.template.metadata.labels")}},
		{name: "invalid selector operator", mutate: func(rs *appsv1.ReplicaSet) {
			rs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}
		}, want: []want{inv("spec.selector.matchExpressions[0].operator"), inv("spec.selector")}},
		{name: "negative replicas", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](-1) }, want: []want{inv("spec.replicas")}},
		{name: "negative minReadySeconds", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.MinReadySeconds = -1 }, want: []want{inv("spec.minReadySeconds")}},
		{name: "restart policy not Always", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			want: []want{nsup("spec.template.spec.restartPolicy")}},
		{name: "active deadline", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) },
			want: []want{inv("spec.template.spec.activeDeadlineSeconds")}},
		{name: "template container invalid", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.Containers[0].Image = "" },
			want: []want{req("spec.template.spec.containers[0].image")}},
		{name: "template image whitespace tolerated", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.Containers[0].Image = " " }},
		{name: "template host port zero tolerated with host network", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.HostNetwork = true }},
		{name: "template ephemeral containers", mutate: func(rs *appsv1.ReplicaSet) {
			rs.Spec.Template.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}}}
		}, want: []want{forb("spec.template.spec.ephemeralContainers")}},
		{name: "read-write GCE PD in replicated pods", mutate: func(rs *appsv1.ReplicaSet) {
			rs.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "pd", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk"}}}}
		}, want: []want{inv("spec.template.spec.volumes[0].gcePersistentDisk.readOnly")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validReplicaSet()
			tc.mutate(rs)
			checkErrs(t, ValidateReplicaSet(rs), tc.want)
		})
	}
}

func TestSelectorMismatchMessage(t *testing.T) {
	rs := validReplicaSet()
	rs.Spec.Template.Labels = map[string]string{"app": "other"}
	e := errAt(ValidateReplicaSet(rs), "spec.template.metadata.labels")
	if e == nil || e.Detail != "`selector` does not match template `labels`" {
		t.Fatalf("got %v", e)
	}
}

func TestValidateReplicaSetUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(rs *appsv1.ReplicaSet)
		want   []want
	}{
		{name: "scale", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](5) }},
		{name: "template change", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" }},
		{name: "selector change", mutate: func(rs *appsv1.ReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "my-app", "tier": "web"}}
			rs.Spec.Template.Labels["tier"] = "web"
		}, want: []want{inv("spec.selector")}},
		{name: "rename", mutate: func(rs *appsv1.ReplicaSet) { rs.Name = "other" }, want: []want{inv("metadata.name")}},
		{name: "negative replicas", mutate: func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](-2) }, want: []want{inv("spec.replicas")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validReplicaSet()
			old.ObjectMeta = storedMeta(old.ObjectMeta)
			rs := old.DeepCopy()
			tc.mutate(rs)
			checkErrs(t, ValidateReplicaSetUpdate(rs, old), tc.want)
		})
	}
}

func TestValidateDeploymentCreate(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(i int32) *intstr.IntOrString { v := intstr.FromInt32(i); return &v }
	tests := []struct {
		name   string
		mutate func(d *appsv1.Deployment)
		want   []want
	}{
		{name: "valid", mutate: func(d *appsv1.Deployment) {}},
		{name: "both zero", mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: num(0), MaxUnavailable: pct("0%")}
		}, want: []want{inv("spec.strategy.rollingUpdate.maxUnavailable")}},
		{name: "max unavailable above 100%", mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = pct("110%")
		}, want: []want{inv("spec.strategy.rollingUpdate.maxUnavailable")}},
		{name: "max surge not a percentage", mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = pct("20Percent")
		}, want: []want{inv("spec.strategy.rollingUpdate.maxSurge")}},
		{name: "negative max surge", mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = num(-1)
		}, want: []want{inv("spec.strategy.rollingUpdate.maxSurge")}},
		{name: "recreate with rolling update", mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
		}, want: []want{forb("spec.strategy.rollingUpdate")}},
		{name: "unknown strategy", mutate: func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "BlueGreen" }, want: []want{nsup("spec.strategy")}},
		{name: "negative revision history", mutate: func(d *appsv1.Deployment) { d.Spec.RevisionHistoryLimit = ptr.To[int32](-1) }, want: []want{inv("spec.revisionHistoryLimit")}},
		{name: "progress deadline not above minReadySeconds", mutate: func(d *appsv1.Deployment) {
			d.Spec.MinReadySeconds = 600
		}, want: []want{inv("spec.progressDeadlineSeconds")}},
		{name: "negative replicas", mutate: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](-1) }, want: []want{inv("spec.replicas")}},
		{name: "missing selector", mutate: func(d *appsv1.Deployment) { d.Spec.Selector = nil }, want: []want{req("spec.selector"), inv("spec.template.metadata.labels")}},
		{name: "restart policy", mutate: func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			want: []want{nsup("spec.template.spec.restartPolicy")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeployment()
			tc.mutate(d)
			checkErrs(t, ValidateDeployment(d), tc.want)
		})
	}
}

func TestMaxSurgeMessage(t *testing.T) {
	d := validDeployment()
	zero := intstr.FromInt32(0)
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &zero, MaxUnavailable: &zero}
	e := errAt(ValidateDeployment(d), "spec.strategy.rollingUpdate.maxUnavailable")
	if e == nil || e.Detail != "may not be 0 when `maxSurge` is 0" {
		t.Fatalf("got %v", e)
	}
}

func TestValidateDeploymentUpdate(t *testing.T) {
	old := validDeployment()
	old.ObjectMeta = storedMeta(old.ObjectMeta)

	d := old.DeepCopy()
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	d.Spec.Replicas = ptr.To[int32](4)
	checkErrs(t, ValidateDeploymentUpdate(d, old), nil)

	d = old.DeepCopy()
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "my-app", "v": "2"}}
	d.Spec.Template.Labels = map[string]string{"app": "my-app", "v": "2"}
	checkErrs(t, ValidateDeploymentUpdate(d, old), []want{inv("spec.selector")})

	d = old.DeepCopy()
	d.ResourceVersion = ""
	checkErrs(t, ValidateDeploymentUpdate(d, old), []want{inv("metadata.resourceVersion")})
}

func TestValidateScale(t *testing.T) {
	tests := []struct {
		name  string
		scale *autoscalingv1.Scale
		want  []want
	}{
		{name: "valid", scale: &autoscalingv1.Scale{ObjectMeta: meta("web"), Spec: autoscalingv1.ScaleSpec{Replicas: 3}}},
		{name: "zero", scale: &autoscalingv1.Scale{ObjectMeta: meta("web")}},
		{name: "negative", scale: &autoscalingv1.Scale{ObjectMeta: meta("web"), Spec: autoscalingv1.ScaleSpec{Replicas: -1}}, want: []want{inv("spec.replicas")}},
		{name: "bad name", scale: &autoscalingv1.Scale{ObjectMeta: meta(strings.Repeat("a", 300))}, want: []want{inv("metadata.name")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateScale(tc.scale), tc.want)
			checkErrs(t, ValidateScale(tc.scale), tc.want)
		})
	}
	checkErrs(t, ValidateScale(nil), []want{req("[]")})
}
