package replicationcontroller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"skiff.dev/controller-manager/pkg/controller/metrics"
	"skiff.dev/controller-manager/pkg/controller/replicaset"
)

// ControllerName names the controller and the source of its events
// (upstream's event source).
const ControllerName = "replication-controller"

// NewController builds the ReplicationController controller. recorder's
// events should have ControllerName as source.
func NewController(client kubernetes.Interface, rcInformer coreinformers.ReplicationControllerInformer, podInformer coreinformers.PodInformer,
	recorder record.EventRecorder, m *metrics.Metrics, opts replicaset.Options) *replicaset.Controller {
	return replicaset.NewBaseController(ControllerName, "replicationmanager", client, rcKind{client: client, informer: rcInformer},
		podInformer, recorder, m, opts)
}

var controllerKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")

// rcKind presents ReplicationControllers to the ReplicaSet controller.
type rcKind struct {
	client   kubernetes.Interface
	informer coreinformers.ReplicationControllerInformer
}

var _ replicaset.Kind = rcKind{}

func (rcKind) GroupVersionKind() schema.GroupVersionKind { return controllerKind }

func (k rcKind) Informer() cache.SharedIndexInformer { return k.informer.Informer() }

func (k rcKind) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	rc, err := k.informer.Lister().ReplicationControllers(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}

func (k rcKind) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	rcs, err := k.informer.Lister().ReplicationControllers(namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ReplicaSet, len(rcs))
	for i, rc := range rcs {
		out[i] = toReplicaSet(rc)
	}
	return out, nil
}

func (k rcKind) GetLive(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	rc, err := k.client.CoreV1().ReplicationControllers(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}

func (k rcKind) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	rc, err := k.client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, toReplicationController(rs), metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}

// Object is the ReplicationController of rs, with its type set so events
// name it whatever the recorder's scheme.
func (rcKind) Object(rs *appsv1.ReplicaSet) runtime.Object {
	rc := toReplicationController(rs)
	rc.TypeMeta = metav1.TypeMeta{APIVersion: controllerKind.GroupVersion().String(), Kind: controllerKind.Kind}
	return rc
}

// toReplicaSet converts rc (sharing its maps and template, so the result is
// as read-only as rc).
func toReplicaSet(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: rc.ObjectMeta,
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rc.Spec.Replicas,
			MinReadySeconds: rc.Spec.MinReadySeconds,
			Selector:        &metav1.LabelSelector{MatchLabels: rc.Spec.Selector},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas:             rc.Status.Replicas,
			FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas:        rc.Status.ReadyReplicas,
			AvailableReplicas:    rc.Status.AvailableReplicas,
			ObservedGeneration:   rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
			Reason: c.Reason, Message: c.Message,
		})
	}
	return rs
}

// toReplicationController converts rs back.
func toReplicationController(rs *appsv1.ReplicaSet) *corev1.ReplicationController {
	tmpl := rs.Spec.Template
	rc := &corev1.ReplicationController{
		ObjectMeta: rs.ObjectMeta,
		Spec: corev1.ReplicationControllerSpec{
			Replicas:        rs.Spec.Replicas,
			MinReadySeconds: rs.Spec.MinReadySeconds,
			Template:        &tmpl,
		},
		Status: corev1.ReplicationControllerStatus{
			Replicas:             rs.Status.Replicas,
			FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
			ReadyReplicas:        rs.Status.ReadyReplicas,
			AvailableReplicas:    rs.Status.AvailableReplicas,
			ObservedGeneration:   rs.Status.ObservedGeneration,
		},
	}
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	for _, c := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
			Reason: c.Reason, Message: c.Message,
		})
	}
	return rc
}
