// Package job holds the Job kind's strategies, defaults and selectable
// fields, and generates a Job's selector.
package job

import (
	"context"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/defaults"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// validated is the kind's validation on create and update.
var validated = rest.Validation(validation.ValidateJob, validation.ValidateJobUpdate)

// Job labels upstream's selector generation sets.
const (
	jobNameLabel            = "batch.kubernetes.io/job-name"
	legacyJobNameLabel      = "job-name"
	controllerUIDLabel      = "batch.kubernetes.io/controller-uid"
	legacyControllerUIDLabe = "controller-uid"
)

// jobStrategy generates the job's selector before validating it, as
// upstream does (after a generated name has been chosen).
type jobStrategy struct{ rest.Generic }

// Strategy is the Job's main endpoint; StatusStrategy its status.
var (
	Strategy       = jobStrategy{rest.Main(rest.WithGeneration, validated)}
	StatusStrategy = rest.Status(validated)
)

// Default applies upstream's v1 defaults to a Job.
var Default = rest.Defaults(defaults.DefaultJob)

func (s jobStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	prepareJob(obj)
	return s.Generic.Validate(ctx, obj)
}

func prepareJob(obj runtime.Object) {
	if job, ok := obj.(*batchv1.Job); ok && (job.Spec.ManualSelector == nil || !*job.Spec.ManualSelector) {
		generateJobSelector(job)
	}
}

// generateJobSelector labels the pod template with the job's name and UID
// and selects on the UID, as upstream does unless manualSelector is set.
func generateJobSelector(job *batchv1.Job) {
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	uid := string(job.UID)
	for k, v := range map[string]string{legacyJobNameLabel: job.Name, jobNameLabel: job.Name, legacyControllerUIDLabe: uid, controllerUIDLabel: uid} {
		if _, found := job.Spec.Template.Labels[k]; !found {
			job.Spec.Template.Labels[k] = v
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, found := job.Spec.Selector.MatchLabels[controllerUIDLabel]; !found {
		job.Spec.Selector.MatchLabels[controllerUIDLabel] = uid
	}
}

// Fields are a Job's selectable fields.
func Fields(obj runtime.Object) fields.Set {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return nil
	}
	return fields.Set{"status.successful": strconv.Itoa(int(job.Status.Succeeded))}
}
