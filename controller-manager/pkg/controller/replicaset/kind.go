package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Kind is what the controller needs of the kind of object whose replicas it
// keeps, seen as apps/v1 ReplicaSets: the ReplicaSets themselves, or the
// core/v1 ReplicationControllers, which upstream's replication manager runs
// through the ReplicaSet controller the same way (converting each to a
// ReplicaSet and back).
type Kind interface {
	// GroupVersionKind is the kind's, for controller references.
	GroupVersionKind() schema.GroupVersionKind
	// Informer is the informer of the kind's objects.
	Informer() cache.SharedIndexInformer
	// Get and List read the informer's cache. Their results share memory
	// with the cache and must not be modified.
	Get(namespace, name string) (*appsv1.ReplicaSet, error)
	List(namespace string) ([]*appsv1.ReplicaSet, error)
	// GetLive reads the object from the API server.
	GetLive(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error)
	// UpdateStatus writes rs's status to its object and returns the stored
	// object.
	UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error)
	// Object is rs as an object of the kind, for events.
	Object(rs *appsv1.ReplicaSet) runtime.Object
}

var replicaSetKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// replicaSets is the Kind of apps/v1 ReplicaSets.
type replicaSets struct {
	client   kubernetes.Interface
	informer appsinformers.ReplicaSetInformer
}

var _ Kind = replicaSets{}

func (replicaSets) GroupVersionKind() schema.GroupVersionKind { return replicaSetKind }

func (k replicaSets) Informer() cache.SharedIndexInformer { return k.informer.Informer() }

func (k replicaSets) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	return k.informer.Lister().ReplicaSets(namespace).Get(name)
}

func (k replicaSets) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	return k.informer.Lister().ReplicaSets(namespace).List(labels.Everything())
}

func (k replicaSets) GetLive(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return k.client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (k replicaSets) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	return k.client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
}

func (replicaSets) Object(rs *appsv1.ReplicaSet) runtime.Object { return rs }
