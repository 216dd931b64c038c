package registry

import (
	"context"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/apis/convert"
	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/authn"
)

// Subresources added with issue 8.
const (
	SubApproval = "approval"
	SubEviction = "eviction"
)

func preparePersistentVolume(obj runtime.Object) {
	if pv, ok := obj.(*corev1.PersistentVolume); ok {
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
	}
}

func preparePersistentVolumeClaim(obj runtime.Object) {
	if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok {
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	}
}

// Job labels upstream's selector generation sets.
const (
	jobNameLabel            = "batch.kubernetes.io/job-name"
	legacyJobNameLabel      = "job-name"
	controllerUIDLabel      = "batch.kubernetes.io/controller-uid"
	legacyControllerUIDLabe = "controller-uid"
)

// jobStrategy generates the job's selector before validating it, as
// upstream does (after a generated name has been chosen).
type jobStrategy struct{ genericStrategy }

func (s jobStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	prepareJob(obj)
	return s.genericStrategy.Validate(ctx, obj)
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

func replicationControllerScale() *ScaleAccessor {
	return scaleOf(func(rc *corev1.ReplicationController) scaleFields {
		return scaleFields{&rc.ObjectMeta, &rc.Spec.Replicas, rc.Status.Replicas, &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}}
	})
}

func statefulSetScale() *ScaleAccessor {
	return scaleOf(func(s *appsv1.StatefulSet) scaleFields {
		return scaleFields{&s.ObjectMeta, &s.Spec.Replicas, s.Status.Replicas, s.Spec.Selector}
	})
}

func replicationControllerFields(obj runtime.Object) fields.Set {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return nil
	}
	return fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
}

func persistentVolumeFields(obj runtime.Object) fields.Set {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return nil
	}
	return fields.Set{"name": pv.Name}
}

func persistentVolumeClaimFields(obj runtime.Object) fields.Set {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	return fields.Set{"name": pvc.Name}
}

func jobFields(obj runtime.Object) fields.Set {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return nil
	}
	return fields.Set{"status.successful": strconv.Itoa(int(job.Status.Succeeded))}
}

func csrFields(obj runtime.Object) fields.Set {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil
	}
	return fields.Set{"spec.signerName": csr.Spec.SignerName}
}

// eventsV1FieldLabels is upstream's field label conversion of
// events.k8s.io Events: their selectable fields as core Events name them.
var eventsV1FieldLabels = map[string]string{
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
}

// eventsV1Fields are the selectable fields of events.k8s.io Events, named
// as upstream's field label conversion of that group names them
// (regarding.*, reportingController) and read from the core Event they are
// stored as (the storage filters core Events).
func eventsV1Fields(obj runtime.Object) fields.Set {
	if e, ok := obj.(*eventsv1.Event); ok {
		obj = convert.EventToCore(e)
	}
	core := eventFields(obj)
	if core == nil {
		return nil
	}
	return fields.Set{
		"regarding.kind":            core["involvedObject.kind"],
		"regarding.namespace":       core["involvedObject.namespace"],
		"regarding.name":            core["involvedObject.name"],
		"regarding.uid":             core["involvedObject.uid"],
		"regarding.apiVersion":      core["involvedObject.apiVersion"],
		"regarding.resourceVersion": core["involvedObject.resourceVersion"],
		"regarding.fieldPath":       core["involvedObject.fieldPath"],
		"reportingController":       core["reportingComponent"],
		"reason":                    core["reason"],
		"type":                      core["type"],
	}
}

// SharedStorage serves a kind from another resource's storage, converting
// objects on the way in and out (events.k8s.io Events are core Events).
type SharedStorage struct {
	// Resource is the core resource whose storage is shared.
	Group, Resource string
	ToStored        func(runtime.Object) (runtime.Object, error)
	FromStored      func(runtime.Object) (runtime.Object, error)
	ListFromStored  func(runtime.Object) (runtime.Object, error)
	NewStoredList   func() runtime.Object
	// FieldLabels maps the served kind's selectable fields to the stored
	// kind's; StoredFields are the stored kind's attributes, which the
	// storage filters with.
	FieldLabels  map[string]string
	StoredFields func(runtime.Object) (labels.Set, fields.Set, error)
}

func eventsConversion() *SharedStorage {
	return &SharedStorage{
		Group: "", Resource: "events",
		FieldLabels:  eventsV1FieldLabels,
		StoredFields: attrFunc(true, eventFields),
		ToStored: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*eventsv1.Event)
			if !ok {
				return nil, fmt.Errorf("expected an events.k8s.io/v1 Event, got %T", obj)
			}
			return convert.EventToCore(e), nil
		},
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*corev1.Event)
			if !ok {
				return obj, nil
			}
			return convert.EventFromCore(e), nil
		},
		ListFromStored: func(obj runtime.Object) (runtime.Object, error) {
			l, ok := obj.(*corev1.EventList)
			if !ok {
				return nil, fmt.Errorf("expected a core EventList, got %T", obj)
			}
			return convert.EventListFromCore(l), nil
		},
		NewStoredList: func() runtime.Object { return &corev1.EventList{} },
	}
}

// CertificateSigningRequest strategies, as upstream's: the main endpoint
// changes neither spec nor status; /status may set the certificate and
// conditions other than Approved and Denied; /approval only the conditions.

type csrStrategy struct{ genericStrategy }

func (s csrStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.genericStrategy.PrepareForCreate(ctx, obj)
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return
	}
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u, ok := authn.UserFrom(ctx); ok && u != nil {
		csr.Spec.Username, csr.Spec.UID = u.Name, u.UID
		csr.Spec.Groups = append([]string(nil), u.Groups...)
		for k, v := range u.Extra {
			if csr.Spec.Extra == nil {
				csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
			}
			csr.Spec.Extra[k] = append(certificatesv1.ExtraValue(nil), v...)
		}
	}
}

func (s csrStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.genericStrategy.PrepareForUpdate(ctx, obj, old)
	copyField(obj, old, "Spec")
}

type csrStatusStrategy struct{ genericStrategy }

func (s csrStatusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.genericStrategy.PrepareForUpdate(ctx, obj, old)
	n, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		preserveCSRCondition(n, o, t)
	}
	stampCSRConditions(n, o)
}

// ValidateUpdate refuses adding Approved or Denied through /status.
func (s csrStatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	errs := validation.ValidateCertificateSigningRequestUpdate(n, o)
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		if countCSRCondition(n, t) > countCSRCondition(o, t) {
			errs = append(errs, field.Forbidden(field.NewPath("status", "conditions"), fmt.Sprintf("updates may not add a condition of type %q", t)))
		}
	}
	return errs
}

type csrApprovalStrategy struct{ genericStrategy }

func (s csrApprovalStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.genericStrategy.PrepareForUpdate(ctx, obj, old)
	n, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	n.Status.Certificate = o.Status.Certificate
	stampCSRConditions(n, o)
}

func (s csrApprovalStrategy) subresource() string { return SubApproval }

// preserveCSRCondition keeps old's conditions of type t in place of new's.
func preserveCSRCondition(n, o *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	var oldConds []certificatesv1.CertificateSigningRequestCondition
	for _, c := range o.Status.Conditions {
		if c.Type == t {
			oldConds = append(oldConds, c)
		}
	}
	out := make([]certificatesv1.CertificateSigningRequestCondition, 0, len(n.Status.Conditions))
	used := 0
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			if used < len(oldConds) {
				out = append(out, oldConds[used])
				used++
			} else {
				out = append(out, c)
			}
			continue
		}
		out = append(out, c)
	}
	n.Status.Conditions = out
}

func countCSRCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) int {
	n := 0
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			n++
		}
	}
	return n
}

// stampCSRConditions sets lastUpdateTime and lastTransitionTime as upstream's
// populateConditionTimestamps does.
func stampCSRConditions(n, o *certificatesv1.CertificateSigningRequest) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range o.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}
