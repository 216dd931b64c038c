package validation

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/defaults"
)

// validJob is a defaulted Job with a generated-style selector.
func validJob() *batchv1.Job {
	return defaulted(defaults.DefaultJob, &batchv1.Job{
		ObjectMeta: meta("my-job"),
		Spec: batchv1.JobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "u1"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"batch.kubernetes.io/controller-uid": "u1"}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
					{Name: "main", Image: "busybox"},
				}},
			},
		},
	})
}

func indexed(j *batchv1.Job, completions int32) {
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.Completions = ptr.To(completions)
}

func exitCodes(op batchv1.PodFailurePolicyOnExitCodesOperator, vs ...int32) *batchv1.PodFailurePolicyOnExitCodesRequirement {
	return &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: vs}
}

func TestValidateJobSpec(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(j *batchv1.Job)
		want   []want
	}{
		{name: "valid", mutate: func(j *batchv1.Job) {}},
		{name: "valid indexed with per-index backoff", mutate: func(j *batchv1.Job) {
			indexed(j, 5)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
			j.Spec.MaxFailedIndexes = ptr.To[int32](5)
		}},
		{name: "restart policy Always", mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			want: []want{req("spec.template.spec.restartPolicy")}},
		{name: "negative fields", mutate: func(j *batchv1.Job) {
			j.Spec.Parallelism = ptr.To[int32](-1)
			j.Spec.BackoffLimit = ptr.To[int32](-1)
			j.Spec.ActiveDeadlineSeconds = ptr.To[int64](-1)
		}, want: []want{inv("spec.parallelism"), inv("spec.backoffLimit"), inv("spec.activeDeadlineSeconds")}},
		{name: "completion mode unknown", mutate: func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To[batchv1.CompletionMode]("Sometimes") },
			want: []want{nsup("spec.completionMode")}},
		{name: "indexed without completions", mutate: func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.Completions = nil
		}, want: []want{req("spec.completions")}},
		{name: "indexed parallelism above the cap", mutate: func(j *batchv1.Job) {
			indexed(j, 5)
			j.Spec.Parallelism = ptr.To[int32](100_001)
		}, want: []want{inv("spec.parallelism")}},
		{name: "backoffLimitPerIndex and maxFailedIndexes need Indexed", mutate: func(j *batchv1.Job) {
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
			j.Spec.MaxFailedIndexes = ptr.To[int32](1)
		}, want: []want{inv("spec.backoffLimitPerIndex"), inv("spec.maxFailedIndexes")}},
		{name: "maxFailedIndexes without backoffLimitPerIndex", mutate: func(j *batchv1.Job) {
			indexed(j, 5)
			j.Spec.MaxFailedIndexes = ptr.To[int32](1)
		}, want: []want{req("spec.backoffLimitPerIndex")}},
		{name: "maxFailedIndexes above completions", mutate: func(j *batchv1.Job) {
			indexed(j, 5)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
			j.Spec.MaxFailedIndexes = ptr.To[int32](6)
		}, want: []want{inv("spec.maxFailedIndexes")}},
		{name: "many completions with per-index backoff need maxFailedIndexes", mutate: func(j *batchv1.Job) {
			indexed(j, 100_001)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
			j.Spec.Parallelism = ptr.To[int32](10_001)
		}, want: []want{req("spec.maxFailedIndexes"), inv("spec.parallelism")}},
		{name: "indexed name too long for the last hostname", mutate: func(j *batchv1.Job) {
			j.Name = strings.Repeat("a", 62)
			indexed(j, 10)
		}, want: []want{inv("metadata.name")}},
		{name: "managedBy not a domain-prefixed path", mutate: func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("no-domain") },
			want: []want{inv("spec.managedBy")}},
		{name: "managedBy too long", mutate: func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/" + strings.Repeat("a", 60)) },
			want: []want{long("spec.managedBy")}},
		{name: "valid pod failure policy", mutate: func(j *batchv1.Job) {
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1, 2)},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
			}}
		}},
		{name: "pod failure policy with OnFailure", mutate: func(j *batchv1.Job) {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1)}}}
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}, want: []want{inv("spec.template.spec.restartPolicy")}},
		{name: "pod failure policy rule errors", mutate: func(j *batchv1.Job) {
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{OnExitCodes: exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 0, 3, 3, 2)},
				{Action: "Explode", OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("nope"), Values: []int32{1}}},
				{Action: batchv1.PodFailurePolicyActionFailIndex, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "Bad Type", Status: "Maybe"}}},
				{Action: batchv1.PodFailurePolicyActionCount},
				{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: exitCodes(batchv1.PodFailurePolicyOnExitCodesOpNotIn, 0),
					OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
			}}
		}, want: []want{
			req("spec.podFailurePolicy.rules[0].action"), inv("spec.podFailurePolicy.rules[0].onExitCodes.values[0]"),
			dup("spec.podFailurePolicy.rules[0].onExitCodes.values[2]"), inv("spec.podFailurePolicy.rules[0].onExitCodes.values"),
			nsup("spec.podFailurePolicy.rules[1].action"), req("spec.podFailurePolicy.rules[1].onExitCodes.operator"),
			inv("spec.podFailurePolicy.rules[1].onExitCodes.containerName"),
			inv("spec.podFailurePolicy.rules[2].action"), inv("spec.podFailurePolicy.rules[2].onPodConditions[0].type"),
			nsup("spec.podFailurePolicy.rules[2].onPodConditions[0].status"),
			inv("spec.podFailurePolicy.rules[3]"), inv("spec.podFailurePolicy.rules[4]"),
		}},
		{name: "pod failure policy with TerminatingOrFailed replacement", mutate: func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1)}}}
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}, want: []want{nsup("spec.podReplacementPolicy")}},
		{name: "too many pod failure policy rules", mutate: func(j *batchv1.Job) {
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{}
			for range 21 {
				j.Spec.PodFailurePolicy.Rules = append(j.Spec.PodFailurePolicy.Rules, batchv1.PodFailurePolicyRule{
					Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1)})
			}
		}, want: []want{many("spec.podFailurePolicy.rules")}},
		{name: "success policy needs Indexed", mutate: func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
		}, want: []want{inv("spec.successPolicy")}},
		{name: "valid success policy", mutate: func(j *batchv1.Job) {
			indexed(j, 10)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
				{SucceededIndexes: ptr.To("0,2-4,9"), SucceededCount: ptr.To[int32](5)}}}
		}},
		{name: "success policy rule errors", mutate: func(j *batchv1.Job) {
			indexed(j, 10)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
				{},
				{SucceededIndexes: ptr.To("3,1")},
				{SucceededIndexes: ptr.To("1-2"), SucceededCount: ptr.To[int32](3)},
				{SucceededCount: ptr.To[int32](11)},
				{SucceededIndexes: ptr.To("10")},
			}}
		}, want: []want{req("spec.successPolicy.rules[0]"), inv("spec.successPolicy.rules[1].succeededIndexes"),
			inv("spec.successPolicy.rules[2].succeededCount"), inv("spec.successPolicy.rules[3].succeededCount"),
			inv("spec.successPolicy.rules[4].succeededIndexes")}},
		{name: "success policy without rules", mutate: func(j *batchv1.Job) {
			indexed(j, 10)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{}
		}, want: []want{req("spec.successPolicy.rules")}},
		{name: "unknown pod replacement policy", mutate: func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To[batchv1.PodReplacementPolicy]("Never") },
			want: []want{nsup("spec.podReplacementPolicy")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			checkErrs(t, ValidateJob(j), tc.want)
		})
	}
}

func TestValidateJobUpdate(t *testing.T) {
	started := metav1.Now()
	tests := []struct {
		name        string
		old, mutate func(j *batchv1.Job)
		want        []want
	}{
		{name: "parallelism may change", mutate: func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) }},
		{name: "completions immutable", mutate: func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](3) },
			want: []want{inv("spec.completions")}},
		{name: "indexed completions change with parallelism", old: func(j *batchv1.Job) { indexed(j, 5) }, mutate: func(j *batchv1.Job) {
			j.Spec.Completions = ptr.To[int32](3)
			j.Spec.Parallelism = ptr.To[int32](3)
		}},
		{name: "indexed completions alone", old: func(j *batchv1.Job) { indexed(j, 5) }, mutate: func(j *batchv1.Job) {
			j.Spec.Completions = ptr.To[int32](3)
		}, want: []want{inv("spec.completions")}},
		{name: "completion mode immutable", mutate: func(j *batchv1.Job) { indexed(j, 1) },
			want: []want{inv("spec.completionMode")}},
		{name: "backoffLimitPerIndex immutable", old: func(j *batchv1.Job) {
			indexed(j, 5)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		}, mutate: func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptr.To[int32](2) }, want: []want{inv("spec.backoffLimitPerIndex")}},
		{name: "maxFailedIndexes may change", old: func(j *batchv1.Job) {
			indexed(j, 5)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		}, mutate: func(j *batchv1.Job) { j.Spec.MaxFailedIndexes = ptr.To[int32](2) }},
		{name: "pod failure policy immutable", old: func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) }, mutate: func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1)}}}
		}, want: []want{inv("spec.podFailurePolicy")}},
		{name: "managedBy immutable", mutate: func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/mine") },
			want: []want{inv("spec.managedBy")}},
		{name: "success policy immutable", old: func(j *batchv1.Job) { indexed(j, 5) }, mutate: func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
		}, want: []want{inv("spec.successPolicy")}},
		{name: "selector immutable", mutate: func(j *batchv1.Job) {
			j.Spec.Selector.MatchLabels["x"] = "y"
			j.Spec.Template.Labels["x"] = "y"
		}, want: []want{inv("spec.selector"), inv("spec.template")}},
		{name: "template immutable when running", mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.NodeSelector = map[string]string{"a": "b"} },
			want: []want{inv("spec.template")}},
		{name: "scheduling directives of a suspended job never started", old: func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) },
			mutate: func(j *batchv1.Job) {
				j.Spec.Template.Spec.NodeSelector = map[string]string{"a": "b"}
				j.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
				j.Spec.Template.Annotations = map[string]string{"note": "x"}
			}},
		{name: "image of a suspended job", old: func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) },
			mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "other" }, want: []want{inv("spec.template")}},
		{name: "scheduling directives of a suspended job that started", old: func(j *batchv1.Job) {
			j.Spec.Suspend = ptr.To(true)
			j.Status.StartTime = &started
		}, mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.NodeSelector = map[string]string{"a": "b"} }, want: []want{inv("spec.template")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validJob()
			old.ResourceVersion = "1"
			if tc.old != nil {
				tc.old(old)
			}
			j := old.DeepCopy()
			tc.mutate(j)
			checkErrs(t, ValidateJobUpdate(j, old), tc.want)
		})
	}
}

// A CronJob's job template is validated as a Job spec whose selector is
// generated later.
func TestValidateCronJobJobTemplate(t *testing.T) {
	cj := cronJobFor("@daily", nil)
	cj.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	cj.Spec.JobTemplate.Spec.ManualSelector = ptr.To(true)
	cj.Spec.JobTemplate.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	checkErrs(t, ValidateCronJob(cj), []want{inv("spec.jobTemplate.spec.selector"), nsup("spec.jobTemplate.spec.manualSelector"),
		inv("spec.jobTemplate.spec.backoffLimitPerIndex")})
}
