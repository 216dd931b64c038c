package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func makeCSR(t *testing.T, cn string, orgs []string, dns []string, ips []net.IP) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns, IPAddresses: ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func csrObject(name, signer, user string, groups []string, req []byte, usages ...certificatesv1.KeyUsage) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: signer, Username: user, Groups: groups, Usages: usages},
	}
}

var clientUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

// allowSAR makes the fake client's SubjectAccessReviews allow exactly the
// (user, subresource) pairs given.
func allowSAR(client *fake.Clientset, allowed map[string]string) *[]string {
	var asked []string
	client.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		sub := sar.Spec.ResourceAttributes.Subresource
		asked = append(asked, sar.Spec.User+"/"+sub)
		sar.Status.Allowed = allowed[sar.Spec.User] == sub
		return true, sar, nil
	})
	return &asked
}

func approvedBy(client *fake.Clientset) (string, bool) {
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "approval" {
			csr := a.(clienttesting.UpdateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
			c, ok := condition(csr, certificatesv1.CertificateApproved)
			return c.Message, ok && c.Reason == "AutoApproved"
		}
	}
	return "", false
}

func TestApprover(t *testing.T) {
	bootstrapper := []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"}
	node := []string{"system:nodes", "system:authenticated"}
	nodeReq := makeCSR(t, "system:node:n1", []string{"system:nodes"}, nil, nil)
	tests := []struct {
		name    string
		csr     *certificatesv1.CertificateSigningRequest
		allowed map[string]string
		serving bool
		want    string // part of the approval message; "" = not approved
	}{
		{name: "bootstrap token with nodeclient",
			csr:     csrObject("a", KubeAPIServerClientKubeletSigner, "system:bootstrap:abcdef", bootstrapper, nodeReq, clientUsages...),
			allowed: map[string]string{"system:bootstrap:abcdef": "nodeclient"}, want: "kubelet client certificate"},
		{name: "bootstrap token without permission",
			csr: csrObject("a", KubeAPIServerClientKubeletSigner, "system:bootstrap:abcdef", bootstrapper, nodeReq, clientUsages...)},
		{name: "node renewing its own",
			csr:     csrObject("a", KubeAPIServerClientKubeletSigner, "system:node:n1", node, nodeReq, clientUsages...),
			allowed: map[string]string{"system:node:n1": "selfnodeclient"}, want: "self kubelet client"},
		{name: "another node's certificate is not self",
			csr:     csrObject("a", KubeAPIServerClientKubeletSigner, "system:node:n2", node, nodeReq, clientUsages...),
			allowed: map[string]string{"system:node:n2": "selfnodeclient"}},
		{name: "not a node subject",
			csr:     csrObject("a", KubeAPIServerClientKubeletSigner, "system:bootstrap:abcdef", bootstrapper, makeCSR(t, "admin", []string{"system:masters"}, nil, nil), clientUsages...),
			allowed: map[string]string{"system:bootstrap:abcdef": "nodeclient"}},
		{name: "server auth usage on the client signer",
			csr:     csrObject("a", KubeAPIServerClientKubeletSigner, "system:bootstrap:abcdef", bootstrapper, nodeReq, certificatesv1.UsageServerAuth),
			allowed: map[string]string{"system:bootstrap:abcdef": "nodeclient"}},
		{name: "other signer",
			csr:     csrObject("a", KubeAPIServerClientSigner, "system:bootstrap:abcdef", bootstrapper, nodeReq, clientUsages...),
			allowed: map[string]string{"system:bootstrap:abcdef": "nodeclient"}},
		{name: "serving: not approved by default",
			csr: csrObject("a", KubeletServingSigner, "system:node:n1", node,
				makeCSR(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, []net.IP{net.ParseIP("192.0.2.1")}), certificatesv1.UsageServerAuth)},
		{name: "serving opt-in: the node's own addresses", serving: true,
			csr: csrObject("a", KubeletServingSigner, "system:node:n1", node,
				makeCSR(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, []net.IP{net.ParseIP("192.0.2.1")}), certificatesv1.UsageServerAuth),
			want: "serving"},
		{name: "serving opt-in: an address not the node's", serving: true,
			csr: csrObject("a", KubeletServingSigner, "system:node:n1", node,
				makeCSR(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, []net.IP{net.ParseIP("192.0.2.9")}), certificatesv1.UsageServerAuth)},
		{name: "serving opt-in: asked by another node", serving: true,
			csr: csrObject("a", KubeletServingSigner, "system:node:n2", node,
				makeCSR(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, nil), certificatesv1.UsageServerAuth)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "192.0.2.1"}, {Type: corev1.NodeHostName, Address: "n1"}}}}
			client := fake.NewClientset(tt.csr, n1)
			allowSAR(client, tt.allowed)
			f := informers.NewSharedInformerFactory(client, 0)
			opts := ApproverOptions{ApproveKubeletServing: tt.serving, Nodes: f.Core().V1().Nodes()}
			_ = f.Core().V1().Nodes().Informer().GetIndexer().Add(n1)
			c, err := NewApprover(client, f.Certificates().V1().CertificateSigningRequests(), nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.queue.ShutDown()
			_ = f.Certificates().V1().CertificateSigningRequests().Informer().GetIndexer().Add(tt.csr)
			if err := c.sync(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
			msg, ok := approvedBy(client)
			if tt.want == "" && ok {
				t.Fatalf("approved (%q), want pending", msg)
			}
			if tt.want != "" && (!ok || !strings.Contains(msg, tt.want)) {
				t.Fatalf("approval = %q %v, want one saying %q", msg, ok, tt.want)
			}
		})
	}
}

func testCA(t *testing.T, notAfter time.Time) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Certificate: cert, Key: key}
}

func approved(csr *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue})
	return csr
}

func TestSigner(t *testing.T) {
	now := time.Now().Truncate(time.Second) // certificates hold whole seconds
	ca := testCA(t, now.Add(2*365*24*time.Hour))
	nodeReq := makeCSR(t, "system:node:n1", []string{"system:nodes"}, nil, nil)
	servingReq := makeCSR(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, []net.IP{net.ParseIP("192.0.2.1")})
	tests := []struct {
		name     string
		csr      *certificatesv1.CertificateSigningRequest
		duration time.Duration
		want     string // "signed", "failed" or "" (left alone)
		lifetime time.Duration
		eku      x509.ExtKeyUsage
	}{
		{name: "kubelet client", csr: approved(csrObject("a", KubeAPIServerClientKubeletSigner, "u", nil, nodeReq, clientUsages...)),
			want: "signed", lifetime: 365 * 24 * time.Hour, eku: x509.ExtKeyUsageClientAuth},
		{name: "expirationSeconds", csr: func() *certificatesv1.CertificateSigningRequest {
			c := approved(csrObject("a", KubeAPIServerClientKubeletSigner, "u", nil, nodeReq, clientUsages...))
			c.Spec.ExpirationSeconds = ptr.To[int32](3600)
			return c
		}(), want: "signed", lifetime: time.Hour, eku: x509.ExtKeyUsageClientAuth},
		{name: "signer duration shorter than asked", duration: 10 * time.Minute, csr: func() *certificatesv1.CertificateSigningRequest {
			c := approved(csrObject("a", KubeAPIServerClientKubeletSigner, "u", nil, nodeReq, clientUsages...))
			c.Spec.ExpirationSeconds = ptr.To[int32](3600)
			return c
		}(), want: "signed", lifetime: 10 * time.Minute, eku: x509.ExtKeyUsageClientAuth},
		{name: "kubelet serving", csr: approved(csrObject("a", KubeletServingSigner, "u", nil, servingReq, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth)),
			want: "signed", lifetime: 365 * 24 * time.Hour, eku: x509.ExtKeyUsageServerAuth},
		{name: "apiserver client", csr: approved(csrObject("a", KubeAPIServerClientSigner, "u", nil, makeCSR(t, "jane", []string{"devs"}, nil, nil), clientUsages...)),
			want: "signed", lifetime: 365 * 24 * time.Hour, eku: x509.ExtKeyUsageClientAuth},
		{name: "not approved", csr: csrObject("a", KubeAPIServerClientKubeletSigner, "u", nil, nodeReq, clientUsages...)},
		{name: "unknown signer", csr: approved(csrObject("a", "example.com/other", "u", nil, nodeReq, clientUsages...))},
		{name: "serving names on the client signer", csr: approved(csrObject("a", KubeAPIServerClientKubeletSigner, "u", nil, servingReq, clientUsages...)), want: "failed"},
		{name: "serving usage without names", csr: approved(csrObject("a", KubeletServingSigner, "u", nil, nodeReq, certificatesv1.UsageServerAuth)), want: "failed"},
		{name: "client auth on the serving signer", csr: approved(csrObject("a", KubeletServingSigner, "u", nil, servingReq, certificatesv1.UsageClientAuth)), want: "failed"},
		{name: "bad request", csr: approved(csrObject("a", KubeAPIServerClientKubeletSigner, "u", nil, []byte("junk"), clientUsages...)), want: "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.csr)
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := NewSigner(client, f.Certificates().V1().CertificateSigningRequests(), nil, SignerOptions{CA: ca, Duration: tt.duration, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer c.queue.ShutDown()
			_ = f.Certificates().V1().CertificateSigningRequests().Informer().GetIndexer().Add(tt.csr)
			if err := c.sync(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
			var written *certificatesv1.CertificateSigningRequest
			for _, a := range client.Actions() {
				if a.GetVerb() == "update" && a.GetSubresource() == "status" {
					written = a.(clienttesting.UpdateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
				}
			}
			got := ""
			if written != nil {
				if _, failed := condition(written, certificatesv1.CertificateFailed); failed {
					got = "failed"
				} else if len(written.Status.Certificate) > 0 {
					got = "signed"
				}
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if got != "signed" {
				return
			}
			block, _ := pem.Decode(written.Status.Certificate)
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if err := cert.CheckSignatureFrom(ca.Certificate); err != nil {
				t.Errorf("not signed by the CA: %v", err)
			}
			if d := cert.NotAfter.Sub(now); d != tt.lifetime {
				t.Errorf("lasts %v after now, want %v", d, tt.lifetime)
			}
			if len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != tt.eku {
				t.Errorf("ext key usages = %v, want [%v]", cert.ExtKeyUsage, tt.eku)
			}
			if cert.IsCA {
				t.Error("signed a CA certificate")
			}
		})
	}
}

func TestSignerBackdateOfShortCertificates(t *testing.T) {
	now := time.Now()
	s := &signer{opts: SignerOptions{CA: testCA(t, now.Add(time.Hour)), Duration: 20 * time.Second, Now: func() time.Time { return now }}}
	nb, na := s.validity(nil)
	if now.Sub(nb) != 2*time.Second || na.Sub(now) != 20*time.Second {
		t.Errorf("validity = %v..%v around now, want 2s before to 20s after", now.Sub(nb), na.Sub(now))
	}
	s.opts.Duration = DefaultSigningDuration
	nb, na = s.validity(nil)
	if now.Sub(nb) != 5*time.Minute || !na.Equal(s.opts.CA.Certificate.NotAfter) {
		t.Errorf("validity = %v before now..%v, want 5m before..the CA's end", now.Sub(nb), na)
	}
}

func TestCleaner(t *testing.T) {
	now := time.Now()
	ca := testCA(t, now.Add(time.Hour))
	s := &signer{opts: SignerOptions{CA: ca, Duration: time.Hour, Now: func() time.Time { return now.Add(-2 * time.Hour) }}}
	req, err := parseCSR(makeCSR(t, "system:node:n1", []string{"system:nodes"}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	der, err := s.sign(req, clientUsages, nil)
	if err != nil {
		t.Fatal(err)
	}
	expiredCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	mk := func(name string, created time.Duration, cond certificatesv1.RequestConditionType, updated time.Duration, cert []byte) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created)}}
		if cond != "" {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: cond, Status: corev1.ConditionTrue, LastUpdateTime: at(updated)}}
		}
		c.Status.Certificate = cert
		return c
	}
	csrs := []*certificatesv1.CertificateSigningRequest{
		mk("pending-new", time.Hour, "", 0, nil),
		mk("pending-old", 25*time.Hour, "", 0, nil),
		mk("approved-unsigned", 2*time.Hour, certificatesv1.CertificateApproved, 2*time.Hour, nil),
		mk("issued-new", 10*time.Minute, certificatesv1.CertificateApproved, 10*time.Minute, []byte("x")),
		mk("issued-old", 2*time.Hour, certificatesv1.CertificateApproved, 2*time.Hour, []byte("x")),
		mk("issued-expired", 10*time.Minute, certificatesv1.CertificateApproved, 10*time.Minute, expiredCert),
		mk("denied-new", time.Hour, certificatesv1.CertificateDenied, 30*time.Minute, nil),
		mk("denied-old", 2*time.Hour, certificatesv1.CertificateDenied, 2*time.Hour, nil),
		mk("failed-old", 2*time.Hour, certificatesv1.CertificateFailed, 2*time.Hour, nil),
	}
	var objs []runtime.Object
	for _, c := range csrs {
		objs = append(objs, c)
	}
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	c := NewCleaner(client, f.Certificates().V1().CertificateSigningRequests(), nil, 0)
	c.now = func() time.Time { return now }
	for _, csr := range csrs {
		_ = f.Certificates().V1().CertificateSigningRequests().Informer().GetIndexer().Add(csr)
	}
	if err := c.Clean(context.Background()); err != nil {
		t.Fatal(err)
	}
	deleted := map[string]bool{}
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" {
			deleted[a.(clienttesting.DeleteAction).GetName()] = true
		}
	}
	want := map[string]bool{"pending-old": true, "issued-old": true, "issued-expired": true, "denied-old": true, "failed-old": true}
	for _, csr := range csrs {
		if deleted[csr.Name] != want[csr.Name] {
			t.Errorf("%s: deleted = %v, want %v", csr.Name, deleted[csr.Name], want[csr.Name])
		}
	}
}

// TestApproverServingCSRBeforeItsNode is the kubelet asking for its
// serving certificate before its Node is stored: the CSR stays pending,
// and is approved as soon as the Node comes with the addresses it names,
// not at the next resync (there is none here).
func TestApproverServingCSRBeforeItsNode(t *testing.T) {
	csr := csrObject("serving-1", KubeletServingSigner, "system:node:n1", []string{"system:nodes", "system:authenticated"},
		makeCSR(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}, []net.IP{net.ParseIP("192.0.2.1")}),
		certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth)
	client := fake.NewClientset(csr)
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := NewApprover(client, f.Certificates().V1().CertificateSigningRequests(), nil,
		ApproverOptions{ApproveKubeletServing: true, Nodes: f.Core().V1().Nodes()})
	if err != nil {
		t.Fatal(err)
	}
	handled := make(chan struct{}, 16)
	h := c.handle
	c.handle = func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
		err := h(ctx, csr)
		handled <- struct{}{}
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	defer func() { cancel(); <-done; f.Shutdown() }()
	f.Start(ctx.Done())
	go func() { defer close(done); _ = c.Run(ctx, 1) }()

	select {
	case <-handled:
	case <-time.After(30 * time.Second):
		t.Fatal("the CSR was not handled")
	}
	if msg, ok := approvedBy(client); ok {
		t.Fatalf("approved (%q) before the Node exists", msg)
	}
	// The Node first without addresses, then with them, as a kubelet
	// registers and then reports its status.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.1"}, {Type: corev1.NodeHostName, Address: "n1"}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if msg, ok := approvedBy(client); ok {
			if !strings.Contains(msg, "serving") {
				t.Fatalf("approval = %q", msg)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the serving CSR was not approved after its Node came with its addresses")
		}
		select {
		case <-handled:
		case <-time.After(100 * time.Millisecond):
		}
	}
}
