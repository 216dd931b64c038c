package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// CleanerName is the cleaner's name, as upstream names it.
const CleanerName = "csrcleaner"

// How long a CSR is kept, as upstream's csrcleaner.
const (
	pendingExpiration  = 24 * time.Hour
	approvedExpiration = time.Hour
	deniedExpiration   = time.Hour
	// CleanerPeriod is how often every CSR is looked at.
	CleanerPeriod = time.Hour
)

// Cleaner deletes CSRs that are done with.
type Cleaner struct {
	client  kubernetes.Interface
	lister  certlisters.CertificateSigningRequestLister
	synced  cache.InformerSynced
	metrics *metrics.Metrics
	period  time.Duration
	now     func() time.Time
}

// NewCleaner builds the cleaner; period 0 is CleanerPeriod.
func NewCleaner(client kubernetes.Interface, informer certinformers.CertificateSigningRequestInformer, m *metrics.Metrics, period time.Duration) *Cleaner {
	if period <= 0 {
		period = CleanerPeriod
	}
	return &Cleaner{client: client, lister: informer.Lister(), synced: informer.Informer().HasSynced, metrics: m, period: period, now: time.Now}
}

// Run cleans every period until ctx ends.
func (c *Cleaner) Run(ctx context.Context, _ int) error {
	logger := klog.FromContext(ctx).WithValues("controller", CleanerName)
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting controller")
	defer logger.Info("Shutting down controller")
	if !cache.WaitForNamedCacheSync(CleanerName, ctx.Done(), c.synced) {
		return nil
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		start := time.Now()
		err := c.Clean(ctx)
		c.metrics.ObserveSync(CleanerName, start, err)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Cleaning CertificateSigningRequests")
		}
	}, c.period)
	return nil
}

// Clean runs one pass.
func (c *Cleaner) Clean(ctx context.Context) error {
	csrs, err := c.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	now := c.now()
	for _, csr := range csrs {
		why := c.expired(csr, now)
		if why == "" {
			continue
		}
		err := c.client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &csr.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Deleted a CSR", "csr", csr.Name, "reason", why)
	}
	return nil
}

// expired says why csr is to be deleted, "" when it is kept.
func (c *Cleaner) expired(csr *certificatesv1.CertificateSigningRequest, now time.Time) string {
	if len(csr.Status.Certificate) > 0 && certificateExpired(csr.Status.Certificate, now) {
		return "its certificate has expired"
	}
	older := func(cond certificatesv1.CertificateSigningRequestCondition, d time.Duration) bool {
		t := cond.LastUpdateTime.Time
		if t.IsZero() {
			t = csr.CreationTimestamp.Time
		}
		return t.Add(d).Before(now)
	}
	if cond, ok := condition(csr, certificatesv1.CertificateApproved); ok && len(csr.Status.Certificate) > 0 && older(cond, approvedExpiration) {
		return "issued more than an hour ago"
	}
	if cond, ok := condition(csr, certificatesv1.CertificateDenied); ok && older(cond, deniedExpiration) {
		return "denied more than an hour ago"
	}
	if cond, ok := condition(csr, certificatesv1.CertificateFailed); ok && older(cond, deniedExpiration) {
		return "failed more than an hour ago"
	}
	_, approved := condition(csr, certificatesv1.CertificateApproved)
	_, denied := condition(csr, certificatesv1.CertificateDenied)
	_, failed := condition(csr, certificatesv1.CertificateFailed)
	if !approved && !denied && !failed && csr.CreationTimestamp.Add(pendingExpiration).Before(now) {
		return "pending for more than a day"
	}
	return ""
}

func certificateExpired(pemBytes []byte, now time.Time) bool {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	return now.After(cert.NotAfter)
}
