package tables

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

func row(obj runtime.Object, cells ...interface{}) metav1.TableRow {
	return metav1.TableRow{Object: runtime.RawExtension{Object: obj}, Cells: cells}
}

func (p *printer) printReplicationController(obj *corev1.ReplicationController) metav1.TableRow {
	var containers []corev1.Container
	if obj.Spec.Template != nil {
		containers = obj.Spec.Template.Spec.Containers
	}
	names, images := layoutContainerCells(containers)
	return row(obj, obj.Name, replicas(obj.Spec.Replicas), int64(obj.Status.Replicas), int64(obj.Status.ReadyReplicas),
		p.since(obj.CreationTimestamp), names, images, labels.FormatLabels(obj.Spec.Selector))
}

func (p *printer) printPodTemplate(obj *corev1.PodTemplate) metav1.TableRow {
	names, images := layoutContainerCells(obj.Template.Spec.Containers)
	return row(obj, obj.Name, names, images, labels.FormatLabels(obj.Template.Labels))
}

func (p *printer) printStatefulSet(obj *appsv1.StatefulSet) metav1.TableRow {
	names, images := layoutContainerCells(obj.Spec.Template.Spec.Containers)
	return row(obj, obj.Name, fmt.Sprintf("%d/%d", int64(obj.Status.ReadyReplicas), replicas(obj.Spec.Replicas)),
		p.since(obj.CreationTimestamp), names, images)
}

func (p *printer) printDaemonSet(obj *appsv1.DaemonSet) metav1.TableRow {
	names, images := layoutContainerCells(obj.Spec.Template.Spec.Containers)
	s := obj.Status
	return row(obj, obj.Name, int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
		int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable), labels.FormatLabels(obj.Spec.Template.Spec.NodeSelector),
		p.since(obj.CreationTimestamp), names, images, metav1.FormatLabelSelector(obj.Spec.Selector))
}

func (p *printer) printControllerRevision(obj *appsv1.ControllerRevision) metav1.TableRow {
	controller := none
	if ref := metav1.GetControllerOf(obj); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			controller = ref.Name
		} else {
			gk := gv.WithKind(ref.Kind).GroupKind()
			controller = ref.Name
			if !gk.Empty() {
				controller = strings.ToLower(gk.String()) + "/" + ref.Name
			}
		}
	}
	return row(obj, obj.Name, controller, obj.Revision, p.since(obj.CreationTimestamp))
}

func hasJobCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (p *printer) printJob(obj *batchv1.Job) metav1.TableRow {
	var completions string
	switch {
	case obj.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", obj.Status.Succeeded, *obj.Spec.Completions)
	case obj.Spec.Parallelism != nil && *obj.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", obj.Status.Succeeded, *obj.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", obj.Status.Succeeded)
	}
	var jobDuration string
	switch {
	case obj.Status.StartTime == nil:
	case obj.Status.CompletionTime == nil:
		jobDuration = duration.HumanDuration(p.clock.Since(obj.Status.StartTime.Time))
	default:
		jobDuration = duration.HumanDuration(obj.Status.CompletionTime.Sub(obj.Status.StartTime.Time))
	}
	var status string
	switch c := obj.Status.Conditions; {
	case hasJobCondition(c, batchv1.JobComplete):
		status = "Complete"
	case hasJobCondition(c, batchv1.JobFailed):
		status = "Failed"
	case obj.DeletionTimestamp != nil:
		status = "Terminating"
	case hasJobCondition(c, batchv1.JobSuspended):
		status = "Suspended"
	case hasJobCondition(c, batchv1.JobFailureTarget):
		status = "FailureTarget"
	default:
		status = "Running"
	}
	names, images := layoutContainerCells(obj.Spec.Template.Spec.Containers)
	return row(obj, obj.Name, status, completions, jobDuration, p.since(obj.CreationTimestamp),
		names, images, metav1.FormatLabelSelector(obj.Spec.Selector))
}

func printBoolPtr(v *bool) string {
	if v == nil {
		return unset
	}
	if *v {
		return "True"
	}
	return "False"
}

func (p *printer) printCronJob(obj *batchv1.CronJob) metav1.TableRow {
	last := none
	if obj.Status.LastScheduleTime != nil {
		last = p.since(*obj.Status.LastScheduleTime)
	}
	tz := none
	if obj.Spec.TimeZone != nil {
		tz = *obj.Spec.TimeZone
	}
	tmpl := obj.Spec.JobTemplate.Spec
	names, images := layoutContainerCells(tmpl.Template.Spec.Containers)
	return row(obj, obj.Name, obj.Spec.Schedule, tz, printBoolPtr(obj.Spec.Suspend), int64(len(obj.Status.Active)), last,
		p.since(obj.CreationTimestamp), names, images, metav1.FormatLabelSelector(tmpl.Selector))
}

func (p *printer) printPodDisruptionBudget(obj *policyv1.PodDisruptionBudget) metav1.TableRow {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if obj.Spec.MinAvailable != nil {
		minAvailable = obj.Spec.MinAvailable.String()
	}
	if obj.Spec.MaxUnavailable != nil {
		maxUnavailable = obj.Spec.MaxUnavailable.String()
	}
	return row(obj, obj.Name, minAvailable, maxUnavailable, int64(obj.Status.DisruptionsAllowed), p.since(obj.CreationTimestamp))
}

// expirationDuration is upstream's csr.ExpirationSecondsToDuration.
func expirationDuration(seconds int32) time.Duration { return time.Duration(seconds) * time.Second }

// ReplicationController prints corev1.ReplicationController objects and lists.
var ReplicationController = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
		ageColumn(),
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
	}, p.printReplicationController, func(l *corev1.ReplicationControllerList) []corev1.ReplicationController { return l.Items })
}}

// PodTemplate prints corev1.PodTemplate objects and lists.
var PodTemplate = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Containers", Type: "string", Description: containersDescription},
		{Name: "Images", Type: "string", Description: imagesDescription},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	}, p.printPodTemplate, func(l *corev1.PodTemplateList) []corev1.PodTemplate { return l.Items })
}}

// StatefulSet prints appsv1.StatefulSet objects and lists.
var StatefulSet = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		ageColumn(),
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
	}, p.printStatefulSet, func(l *appsv1.StatefulSetList) []appsv1.StatefulSet { return l.Items })
}}

// DaemonSet prints appsv1.DaemonSet objects and lists.
var DaemonSet = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Desired", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
		{Name: "Current", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
		{Name: "Ready", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
		{Name: "Up-to-date", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
		{Name: "Available", Type: "integer", Description: extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
		{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
		ageColumn(),
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
		{Name: "Selector", Type: "string", Priority: 1, Description: extensionsv1beta1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
	}, p.printDaemonSet, func(l *appsv1.DaemonSetList) []appsv1.DaemonSet { return l.Items })
}}

// ControllerRevision prints appsv1.ControllerRevision objects and lists.
var ControllerRevision = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "string", Description: appsv1beta1.ControllerRevision{}.SwaggerDoc()["revision"]},
		ageColumn(),
	}, p.printControllerRevision, func(l *appsv1.ControllerRevisionList) []appsv1.ControllerRevision { return l.Items })
}}

// Job prints batchv1.Job objects and lists.
var Job = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Status", Type: "string", Description: "Status of the job."},
		{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
		{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		ageColumn(),
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	}, p.printJob, func(l *batchv1.JobList) []batchv1.Job { return l.Items })
}}

// CronJob prints batchv1.CronJob objects and lists.
var CronJob = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Schedule", Type: "string", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["schedule"]},
		{Name: "Timezone", Type: "string", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
		{Name: "Suspend", Type: "boolean", Description: batchv1beta1.CronJobSpec{}.SwaggerDoc()["suspend"]},
		{Name: "Active", Type: "integer", Description: batchv1beta1.CronJobStatus{}.SwaggerDoc()["active"]},
		{Name: "Last Schedule", Type: "string", Description: batchv1beta1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
		ageColumn(),
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	}, p.printCronJob, func(l *batchv1.CronJobList) []batchv1.CronJob { return l.Items })
}}

// PodDisruptionBudget prints policyv1.PodDisruptionBudget objects and lists.
var PodDisruptionBudget = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		ageColumn(),
	}, p.printPodDisruptionBudget, func(l *policyv1.PodDisruptionBudgetList) []policyv1.PodDisruptionBudget { return l.Items })
}}
