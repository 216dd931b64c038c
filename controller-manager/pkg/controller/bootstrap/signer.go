package bootstrap

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	jws "k8s.io/cluster-bootstrap/token/jws"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// SignerName is the bootstrap signer's name, as upstream names it.
const SignerName = "bootstrapsigner"

// signerKey is the one queue key: cluster-info is the only object signed.
const signerKey = metav1.NamespacePublic + "/" + bootstrapapi.ConfigMapClusterInfo

// Signer keeps the cluster-info ConfigMap signed with the signing tokens.
type Signer struct {
	client  kubernetes.Interface
	secrets corelisters.SecretLister
	cms     corelisters.ConfigMapLister
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	metrics *metrics.Metrics
	now     func() time.Time
}

// NewSigner builds the bootstrap signer.
func NewSigner(client kubernetes.Interface, secrets coreinformers.SecretInformer, configMaps coreinformers.ConfigMapInformer, m *metrics.Metrics) (*Signer, error) {
	s := &Signer{
		client: client, secrets: secrets.Lister(), cms: configMaps.Lister(), metrics: m, now: time.Now,
		synced: []cache.InformerSynced{secrets.Informer().HasSynced, configMaps.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, "bootstrap_signer")),
	}
	onSecret := func(obj any) {
		if _, ok := isBootstrapToken(obj); ok {
			s.queue.Add(signerKey)
		}
	}
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onSecret, UpdateFunc: func(_, obj any) { onSecret(obj) }, DeleteFunc: onSecret,
	}); err != nil {
		return nil, err
	}
	onConfigMap := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Namespace == metav1.NamespacePublic && cm.Name == bootstrapapi.ConfigMapClusterInfo {
			s.queue.Add(signerKey)
		}
	}
	if _, err := configMaps.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onConfigMap, UpdateFunc: func(_, obj any) { onConfigMap(obj) },
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// Run waits for the caches, then runs one worker until ctx is done.
func (s *Signer) Run(ctx context.Context, _ int) error {
	return controllerutil.Workers{Name: SignerName, Queue: s.queue, Sync: s.sync, Metrics: s.metrics, Synced: s.synced}.Run(ctx, 1)
}

// signatures are the detached JWS of content for every usable signing token.
func (s *Signer) signatures(content string) (map[string]string, time.Duration, error) {
	secrets, err := s.secrets.Secrets(metav1.NamespaceSystem).List(labels.Everything())
	if err != nil {
		return nil, 0, err
	}
	now := s.now()
	sigs := map[string]string{}
	var next time.Duration
	for _, secret := range secrets {
		if _, ok := isBootstrapToken(secret); !ok || secret.DeletionTimestamp != nil {
			continue
		}
		if bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenUsageSigningKey) != "true" {
			continue
		}
		id := bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenIDKey)
		tokenSecret := bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenSecretKey)
		if id == "" || tokenSecret == "" || secret.Name != bootstrapapi.BootstrapTokenSecretPrefix+id {
			continue
		}
		left, expired := bootstrapsecretutil.GetExpiration(secret, now)
		if expired {
			continue
		}
		if left > 0 && (next == 0 || left < next) {
			next = left
		}
		sig, err := jws.ComputeDetachedSignature(content, id, tokenSecret)
		if err != nil {
			return nil, 0, fmt.Errorf("signing with token %s: %w", id, err)
		}
		sigs[id] = sig
	}
	return sigs, next, nil
}

func (s *Signer) sync(ctx context.Context, _ string) error {
	cm, err := s.cms.ConfigMaps(metav1.NamespacePublic).Get(bootstrapapi.ConfigMapClusterInfo)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	content, ok := cm.Data[bootstrapapi.KubeConfigKey]
	if !ok {
		klog.FromContext(ctx).Info("cluster-info has no kubeconfig to sign", "configMap", klog.KObj(cm))
		return nil
	}
	sigs, next, err := s.signatures(content)
	if err != nil {
		return err
	}
	if next > 0 {
		// A token's signature goes when it expires.
		s.queue.AddAfter(signerKey, next)
	}
	want := map[string]string{}
	for k, v := range cm.Data {
		if !strings.HasPrefix(k, bootstrapapi.JWSSignatureKeyPrefix) {
			want[k] = v
		}
	}
	for id, sig := range sigs {
		want[bootstrapapi.JWSSignatureKeyPrefix+id] = sig
	}
	if equalData(want, cm.Data) {
		return nil
	}
	updated := cm.DeepCopy()
	updated.Data = want
	if _, err := s.client.CoreV1().ConfigMaps(metav1.NamespacePublic).Update(ctx, updated, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating the signatures of cluster-info: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Signed cluster-info", "tokens", len(sigs))
	return nil
}

func equalData(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
