package job

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestJobSelectorGeneration(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "u-1"}}
	prepareJob(job)
	l := job.Spec.Template.Labels
	if l["batch.kubernetes.io/job-name"] != "pi" || l["job-name"] != "pi" || l["controller-uid"] != "u-1" || l["batch.kubernetes.io/controller-uid"] != "u-1" {
		t.Errorf("template labels = %v", l)
	}
	if job.Spec.Selector.MatchLabels["batch.kubernetes.io/controller-uid"] != "u-1" || len(job.Spec.Selector.MatchLabels) != 1 {
		t.Errorf("selector = %v", job.Spec.Selector)
	}
	manual := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "m", UID: "u-2"}, Spec: batchv1.JobSpec{ManualSelector: ptr.To(true)}}
	prepareJob(manual)
	if manual.Spec.Selector != nil || manual.Spec.Template.Labels != nil {
		t.Errorf("manualSelector job changed: %+v", manual.Spec)
	}
}
