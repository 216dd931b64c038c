package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"skiff.dev/controller-manager/pkg/controller/controllerutil"
	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// Controller runs a handler on every CertificateSigningRequest that
// changes (upstream's CertificateController, the frame of the approver and
// the signer).
type Controller struct {
	name    string
	client  kubernetes.Interface
	lister  certlisters.CertificateSigningRequestLister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	metrics *metrics.Metrics
	// handle gets a copy of the CSR, free to modify.
	handle func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error
}

func newController(name string, client kubernetes.Interface, informer certinformers.CertificateSigningRequestInformer, m *metrics.Metrics,
	handle func(context.Context, *certificatesv1.CertificateSigningRequest) error) (*Controller, error) {
	c := &Controller{
		name: name, client: client, lister: informer.Lister(), synced: informer.Informer().HasSynced, metrics: m, handle: handle,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			metrics.QueueConfig[string](m, name)),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the cache, then runs workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return controllerutil.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, Metrics: c.metrics,
		Synced: []cache.InformerSynced{c.synced}}.Run(ctx, workers)
}

func (c *Controller) sync(ctx context.Context, name string) error {
	csr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.handle(ctx, csr.DeepCopy())
}

// parseCSR decodes the PEM request of a CSR and checks its signature.
func parseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the request's signature: %w", err)
	}
	return req, nil
}

// condition reports whether csr has a condition of type t with status
// True.
func condition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) (certificatesv1.CertificateSigningRequestCondition, bool) {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status != "False" {
			return c, true
		}
	}
	return certificatesv1.CertificateSigningRequestCondition{}, false
}
