package bootstrap

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// TokenCleanerName is the cleaner's name, as upstream names it.
const TokenCleanerName = "tokencleaner"

// isBootstrapToken says whether obj is a bootstrap token Secret.
func isBootstrapToken(obj any) (*corev1.Secret, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	s, ok := obj.(*corev1.Secret)
	return s, ok && s.Namespace == metav1.NamespaceSystem && s.Type == corev1.SecretType(bootstrapapi.SecretTypeBootstrapToken)
}

// TokenCleaner deletes expired bootstrap token Secrets.
type TokenCleaner struct {
	client  kubernetes.Interface
	lister  corelisters.SecretLister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	metrics *metrics.Metrics
	now     func() time.Time
}

// NewTokenCleaner builds the token cleaner over a Secret informer.
func NewTokenCleaner(client kubernetes.Interface, secrets coreinformers.SecretInformer, m *metrics.Metrics) (*TokenCleaner, error) {
	c := &TokenCleaner{
		client: client, lister: secrets.Lister(), synced: secrets.Informer().HasSynced, metrics: m, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "token_cleaner")),
	}
	enqueue := func(obj any) {
		if s, ok := isBootstrapToken(obj); ok {
			c.queue.Add(s.Namespace + "/" + s.Name)
		}
	}
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the cache, then runs workers until ctx is done.
func (c *TokenCleaner) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{Name: TokenCleanerName, Queue: c.queue, Sync: c.sync, Metrics: c.metrics,
		Synced: []cache.InformerSynced{c.synced}}.Run(ctx, workers)
}

func (c *TokenCleaner) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	secret, err := c.lister.Secrets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, ok := isBootstrapToken(secret); !ok || secret.DeletionTimestamp != nil {
		return nil
	}
	left, expired := bootstrapsecretutil.GetExpiration(secret, c.now())
	if !expired {
		if left > 0 {
			// Looked at again when it expires.
			c.queue.AddAfter(key, left)
		}
		return nil
	}
	err = c.client.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &secret.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting the expired bootstrap token %s: %w", key, err)
	}
	klog.FromContext(ctx).Info("Deleted an expired bootstrap token", "secret", klog.KObj(secret))
	return nil
}
