package kubelet

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"skiff.dev/kubelet/pkg/pod"
)

// Services is pod.ServiceLister over a Service informer's cache (every
// Service of the cluster, as upstream's kubelet watches them).
type Services struct {
	Lister    corelisters.ServiceLister
	HasSynced cache.InformerSynced
}

var _ pod.ServiceLister = Services{}

// Services implements pod.ServiceLister.
func (s Services) Services(namespace string) ([]*corev1.Service, error) {
	return s.Lister.Services(namespace).List(labels.Everything())
}

// Synced implements pod.ServiceLister.
func (s Services) Synced() bool { return s.HasSynced() }
