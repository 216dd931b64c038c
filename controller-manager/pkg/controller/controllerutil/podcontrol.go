package controllerutil

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"skiff.dev/component-base/tracing"
)

// Event reasons of pod creation and deletion, as upstream names them.
const (
	SuccessfulCreatePodReason = "SuccessfulCreate"
	FailedCreatePodReason     = "FailedCreate"
	SuccessfulDeletePodReason = "SuccessfulDelete"
	FailedDeletePodReason     = "FailedDelete"
)

// PodControl creates and deletes the pods of a controller and records the
// events of each on the controller's object.
type PodControl interface {
	// CreatePod creates a pod from template in namespace, controlled by
	// controllerRef, and records the event on owner.
	CreatePod(ctx context.Context, namespace string, template *corev1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference) error
	// DeletePod deletes the pod namespace/name and records the event on
	// owner. A NotFound error is returned as is and records nothing.
	DeletePod(ctx context.Context, namespace, name string, owner runtime.Object) error
}

// RealPodControl is the PodControl that talks to the API server.
type RealPodControl struct {
	Client   kubernetes.Interface
	Recorder record.EventRecorder
}

var _ PodControl = RealPodControl{}

// ErrNoPodLabels is returned when a template would make a pod without labels,
// which no selector could ever match.
var ErrNoPodLabels = errors.New("unable to create pods, no labels")

// CreatePod implements PodControl.
func (r RealPodControl) CreatePod(ctx context.Context, namespace string, template *corev1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference) error {
	return r.CreatePodWithGenerateName(ctx, namespace, template, owner, controllerRef, "")
}

// CreatePodWithGenerateName is CreatePod with the pod's generateName
// (empty: "<owner name>-"), as the Job controller names the pods of an
// Indexed Job "<job>-<index>-".
func (r RealPodControl) CreatePodWithGenerateName(ctx context.Context, namespace string, template *corev1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	pod, err := PodFromTemplate(template, owner, controllerRef)
	if err != nil {
		return err
	}
	if generateName != "" {
		pod.GenerateName = generateName
	}
	if len(pod.Labels) == 0 {
		return ErrNoPodLabels
	}
	ctx, span := tracing.Start(ctx, "Create pod", tracing.NamespaceKey.String(namespace))
	created, err := r.Client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err == nil {
		span.SetAttributes(tracing.PodAttributes(created)...)
	}
	tracing.End(span, err)
	if err != nil {
		// A terminating namespace refuses every create: not worth an event.
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			r.Recorder.Eventf(owner, corev1.EventTypeWarning, FailedCreatePodReason, "Error creating: %v", err)
		}
		return err
	}
	klog.FromContext(ctx).V(4).Info("Controller created pod", "controller", controllerRef.Name, "pod", klog.KObj(created))
	r.Recorder.Eventf(owner, corev1.EventTypeNormal, SuccessfulCreatePodReason, "Created pod: %v", created.Name)
	return nil
}

// DeletePod implements PodControl.
func (r RealPodControl) DeletePod(ctx context.Context, namespace, name string, owner runtime.Object) error {
	err := r.Client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		r.Recorder.Eventf(owner, corev1.EventTypeWarning, FailedDeletePodReason, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %w", err)
	}
	klog.FromContext(ctx).V(4).Info("Controller deleted pod", "pod", klog.KRef(namespace, name))
	r.Recorder.Eventf(owner, corev1.EventTypeNormal, SuccessfulDeletePodReason, "Deleted pod: %v", name)
	return nil
}

// PodFromTemplate builds the pod a controller creates from template: the
// template's labels, annotations, finalizers and spec, generateName
// "<owner name>-", and controllerRef as its ownerReference.
func PodFromTemplate(template *corev1.PodTemplateSpec, owner runtime.Object, controllerRef *metav1.OwnerReference) (*corev1.Pod, error) {
	m, err := metaOf(owner)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Labels:       copyMap(template.Labels),
			Annotations:  copyMap(template.Annotations),
			GenerateName: podsPrefix(m.GetName()),
			Finalizers:   append([]string(nil), template.Finalizers...),
		},
		Spec: *template.Spec.DeepCopy(),
	}
	if controllerRef != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*controllerRef}
	}
	return pod, nil
}

// podsPrefix is "<name>-", or name when that is not a valid name prefix.
func podsPrefix(name string) string {
	prefix := name + "-"
	if len(apivalidation.NameIsDNSSubdomain(prefix, true)) != 0 {
		return name
	}
	return prefix
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return m, nil
}

func copyMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// NewControllerRef is the ownerReference that makes owner, of kind gvk,
// the controller of an object: controller and blockOwnerDeletion true.
func NewControllerRef(owner metav1.Object, apiVersion, kind string) *metav1.OwnerReference {
	yes := true
	return &metav1.OwnerReference{
		APIVersion:         apiVersion,
		Kind:               kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}
