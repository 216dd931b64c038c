package certificates

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"skiff.dev/controller-manager/pkg/controller/metrics"
)

// ApproverName is the approver's name, as upstream names it.
const ApproverName = "csrapproving"

// ApproverOptions configure the approver.
type ApproverOptions struct {
	// ApproveKubeletServing, off by default as upstream, approves
	// kubernetes.io/kubelet-serving CSRs whose requester is the node they
	// name and whose names are all that Node's addresses. Nodes is then
	// required: a serving CSR that came before its Node (or before the
	// addresses it names) is looked at again when that Node changes.
	ApproveKubeletServing bool
	Nodes                 coreinformers.NodeInformer
}

// recognizer is one kind of CSR the approver approves when the requester
// has permission.
type recognizer struct {
	recognize  func(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool
	permission authorizationv1.ResourceAttributes
	message    string
}

func csrPermission(subresource string) authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create", Subresource: subresource, Version: "*"}
}

func isNodeClientCert(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == KubeAPIServerClientKubeletSigner && ValidateKubeletClientCSR(req, csr.Spec.Usages) == nil
}

func isSelfNodeClientCert(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.Username == req.Subject.CommonName && isNodeClientCert(csr, req)
}

// NewApprover builds the approver.
func NewApprover(client kubernetes.Interface, informer certinformers.CertificateSigningRequestInformer, m *metrics.Metrics, opts ApproverOptions) (*Controller, error) {
	if opts.ApproveKubeletServing && opts.Nodes == nil {
		return nil, fmt.Errorf("%s: approving kubelet serving certificates needs the Node lister", ApproverName)
	}
	a := &approver{client: client, opts: opts, recognizers: []recognizer{
		{recognize: isSelfNodeClientCert, permission: csrPermission("selfnodeclient"),
			message: "Auto approving self kubelet client certificate after SubjectAccessReview."},
		{recognize: isNodeClientCert, permission: csrPermission("nodeclient"),
			message: "Auto approving kubelet client certificate after SubjectAccessReview."},
	}}
	c, err := newController(ApproverName, client, informer, m, a.handle)
	if err != nil || !opts.ApproveKubeletServing {
		return c, err
	}
	a.nodes = opts.Nodes.Lister()
	// A kubelet asks for its serving certificate as soon as it knows its
	// addresses, which may be before the Node with them is stored here:
	// such a CSR is left pending, and handled again when its Node is
	// added or its addresses change (else only at the next resync).
	onNode := func(obj any) {
		node, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		csrs, err := c.lister.List(labels.Everything())
		if err != nil {
			return
		}
		for _, csr := range csrs {
			if csr.Spec.SignerName == KubeletServingSigner && csr.Spec.Username == nodeUserPrefix+node.Name && pending(csr) {
				c.queue.Add(csr.Name)
			}
		}
	}
	if _, err := opts.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onNode,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := cur.(*corev1.Node)
			if ok1 && ok2 && equality.Semantic.DeepEqual(o.Status.Addresses, n.Status.Addresses) {
				return
			}
			onNode(cur)
		},
	}); err != nil {
		return nil, err
	}
	c.synced = func() bool { return informer.Informer().HasSynced() && opts.Nodes.Informer().HasSynced() }
	return c, nil
}

// pending is a CSR neither approved, denied nor signed.
func pending(csr *certificatesv1.CertificateSigningRequest) bool {
	_, approved := condition(csr, certificatesv1.CertificateApproved)
	_, denied := condition(csr, certificatesv1.CertificateDenied)
	return !approved && !denied && len(csr.Status.Certificate) == 0
}

type approver struct {
	client      kubernetes.Interface
	opts        ApproverOptions
	nodes       corelisters.NodeLister
	recognizers []recognizer
}

func (a *approver) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if !pending(csr) {
		return nil
	}
	req, err := parseCSR(csr.Spec.Request)
	if err != nil {
		// The signer marks it Failed; nothing to approve.
		klog.FromContext(ctx).V(2).Info("Not approving an unparsable CSR", "csr", csr.Name, "err", err)
		return nil
	}
	var tried []string
	for _, r := range a.recognizers {
		if !r.recognize(csr, req) {
			continue
		}
		tried = append(tried, r.permission.Subresource)
		ok, err := a.authorize(ctx, csr, r.permission)
		if err != nil {
			return err
		}
		if ok {
			return a.approve(ctx, csr, r.message)
		}
	}
	if csr.Spec.SignerName == KubeletServingSigner && a.opts.ApproveKubeletServing {
		if why := a.servingRefusal(csr, req); why != "" {
			klog.FromContext(ctx).V(2).Info("Not approving the kubelet serving CSR", "csr", csr.Name, "reason", why)
			return nil
		}
		return a.approve(ctx, csr, "Auto approving kubelet serving certificate: the requesting node's own addresses.")
	}
	if len(tried) != 0 {
		// As upstream: left pending for a person (or a later policy) to
		// decide; its next update or resync asks again.
		klog.FromContext(ctx).V(2).Info("Recognized the CSR but the SubjectAccessReview did not allow it", "csr", csr.Name, "tried", tried, "user", csr.Spec.Username)
	}
	return nil
}

// authorize asks whether the CSR's requester has permission.
func (a *approver) authorize(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, attrs authorizationv1.ResourceAttributes) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra, ResourceAttributes: &attrs,
	}}
	got, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("SubjectAccessReview for CSR %s: %w", csr.Name, err)
	}
	return got.Status.Allowed, nil
}

func (a *approver) approve(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, message string) error {
	now := metav1.Now()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved", Message: message,
		LastUpdateTime: now, LastTransitionTime: now,
	})
	_, err := a.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("approving CSR %s: %w", csr.Name, err)
	}
	klog.FromContext(ctx).Info("Approved the CSR", "csr", csr.Name, "signer", csr.Spec.SignerName, "user", csr.Spec.Username)
	return nil
}

// servingRefusal says why a kubelet serving CSR is not approved ("" when
// it is): the requester must be the node the certificate names, in
// system:nodes, and every DNS name and IP address must be one of that
// Node's status addresses.
func (a *approver) servingRefusal(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) string {
	if err := ValidateKubeletServingCSR(req, csr.Spec.Usages); err != nil {
		return err.Error()
	}
	if csr.Spec.Username != req.Subject.CommonName || !slices.Contains(csr.Spec.Groups, nodesGroup) {
		return "the requester is not the node the certificate names"
	}
	node, err := a.nodes.Get(strings.TrimPrefix(req.Subject.CommonName, nodeUserPrefix))
	if err != nil {
		return fmt.Sprintf("the node: %v", err)
	}
	var ips []net.IP
	var names []string
	for _, addr := range node.Status.Addresses {
		if ip := net.ParseIP(addr.Address); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, addr.Address)
		}
	}
	for _, n := range req.DNSNames {
		if !slices.Contains(names, n) {
			return fmt.Sprintf("DNS name %q is not one of the node's addresses", n)
		}
	}
	for _, ip := range req.IPAddresses {
		if !slices.ContainsFunc(ips, ip.Equal) {
			return fmt.Sprintf("IP address %s is not one of the node's addresses", ip)
		}
	}
	return ""
}
