package certs

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
)

// Defaults applied by Generate to empty Options fields.
const (
	DefaultServer           = "https://127.0.0.1:6443"
	DefaultServiceClusterIP = "10.96.0.1"
)

// RenewBefore is how close to its expiry a leaf certificate on disk may be
// and still be kept; one that expires sooner is issued again.
const RenewBefore = 30 * 24 * time.Hour

// Identities written by Generate.
const (
	APIServerCommonName              = "kube-apiserver"
	APIServerKubeletClientCommonName = "kube-apiserver-kubelet-client"
	AdminCommonName                  = "kubernetes-admin"
	ControllerManagerCommonName      = "system:kube-controller-manager"
	SchedulerCommonName              = "system:kube-scheduler"
	ProxyCommonName                  = "system:kube-proxy"
	DNSCommonName                    = "system:skiff-dns"
	// FrontProxyClientCommonName is the aggregation layer's client
	// certificate (kubeadm's front-proxy-client), signed by the front-proxy
	// CA: the API server presents it to aggregated API servers.
	FrontProxyClientCommonName = "front-proxy-client"
	NodeCommonNamePrefix       = "system:node:"
	// APIServerEtcdClientCommonName is the API server's client certificate
	// for etcd (kubeadm's apiserver-etcd-client), signed by the etcd CA.
	APIServerEtcdClientCommonName = "kube-apiserver-etcd-client"
	MastersGroup                  = "system:masters"
	NodesGroup                    = "system:nodes"
)

// Options says what Generate writes and where.
type Options struct {
	// Dir receives the certificates and keys. Required.
	Dir string
	// KubeconfigDir receives the kubeconfigs; defaults to the parent of Dir.
	KubeconfigDir string
	// Server is the API server URL written into every kubeconfig; its host is
	// also a SAN of the API server certificate. Defaults to DefaultServer.
	Server string
	// APIServerSANs are extra IPs or DNS names for the API server certificate,
	// on top of those APIServerSANs always adds.
	APIServerSANs []string
	// ServiceClusterIP is the address of the kubernetes Service. Defaults to
	// DefaultServiceClusterIP.
	ServiceClusterIP string
	// Nodes are the node names that get kubelet certificates and kubeconfigs.
	// Defaults to this machine's lower-cased hostname.
	Nodes []string
	// NodeIPs are extra IP SANs of each node's kubelet serving certificate,
	// keyed by node name. Every key must be in Nodes.
	NodeIPs map[string][]string
	// EtcdMembers maps the name of each member of an external etcd cluster
	// (its --name) to the IP addresses and DNS names it is reached at. Each
	// member gets a serving certificate (etcd-NAME-server, for its clients,
	// with loopback added) and a peer certificate (etcd-NAME-peer), both
	// signed by the etcd CA (etcd-ca), and the API server gets
	// apiserver-etcd-client. Empty: no etcd PKI is written, as for the
	// embedded etcd.
	EtcdMembers map[string][]string
	// Force issues everything again, the CA and service-account key included.
	Force bool
}

// complete fills in defaults and validates opts.
func (o *Options) complete(h host) error {
	if o.KubeconfigDir == "" && o.Dir != "" {
		o.KubeconfigDir = filepath.Dir(filepath.Clean(o.Dir))
	}
	if o.Server == "" {
		o.Server = DefaultServer
	}
	if _, err := serverHostname(o.Server); err != nil {
		return err
	}
	if o.ServiceClusterIP == "" {
		o.ServiceClusterIP = DefaultServiceClusterIP
	}
	if net.ParseIP(o.ServiceClusterIP) == nil {
		return fmt.Errorf("invalid service cluster IP %q", o.ServiceClusterIP)
	}
	if len(o.Nodes) == 0 {
		if errs := validation.IsDNS1123Subdomain(h.name); errs != nil {
			return fmt.Errorf("hostname %q is not a valid node name (%s); name the node explicitly", h.name, strings.Join(errs, "; "))
		}
		o.Nodes = []string{h.name}
	}
	var nodes []string
	for _, node := range o.Nodes {
		if errs := validation.IsDNS1123Subdomain(node); errs != nil {
			return fmt.Errorf("invalid node name %q: %s", node, strings.Join(errs, "; "))
		}
		if !slices.Contains(nodes, node) {
			nodes = append(nodes, node)
		}
	}
	o.Nodes = nodes
	for node, ips := range o.NodeIPs {
		if !slices.Contains(o.Nodes, node) {
			return fmt.Errorf("IP given for node %q, which is not among the nodes %v", node, o.Nodes)
		}
		for _, ip := range ips {
			if net.ParseIP(ip) == nil {
				return fmt.Errorf("invalid IP %q for node %q", ip, node)
			}
		}
	}
	for member, hosts := range o.EtcdMembers {
		if errs := validation.IsDNS1123Subdomain(member); errs != nil {
			return fmt.Errorf("invalid etcd member name %q: %s", member, strings.Join(errs, "; "))
		}
		if len(hosts) == 0 {
			return fmt.Errorf("etcd member %q has no address: give the IP or DNS name its peers and clients reach it at", member)
		}
		if _, err := normalizeHosts(hosts); err != nil {
			return fmt.Errorf("etcd member %q: %w", member, err)
		}
	}
	return nil
}

// Action says what Generate did with a file.
type Action string

// Actions recorded in a Result.
const (
	// Kept means the file on disk was right and was left alone.
	Kept Action = "kept"
	// Written means the file was created or replaced.
	Written Action = "written"
)

// File is one file Generate is responsible for.
type File struct {
	Path   string
	Action Action
	// Reason says why the file was written ("missing", "forced", "SANs not
	// covered: ...") or, for a kept file, is empty.
	Reason string
}

// Result lists every file Generate is responsible for, in the order handled.
type Result struct {
	Files []File
}

// Written returns the paths of the files that were written.
func (r *Result) Written() []string { return r.paths(Written) }

// Kept returns the paths of the files that were left as they were.
func (r *Result) Kept() []string { return r.paths(Kept) }

func (r *Result) paths(action Action) []string {
	var out []string
	for _, f := range r.Files {
		if f.Action == action {
			out = append(out, f.Path)
		}
	}
	return out
}

func (r *Result) record(logger klog.Logger, path string, action Action, reason string) {
	r.Files = append(r.Files, File{Path: path, Action: action, Reason: reason})
	if action == Written {
		logger.V(1).Info("Wrote file", "path", path, "reason", reason)
	} else {
		logger.V(2).Info("Kept file", "path", path)
	}
}

// certSpec is one certificate of the plan.
type certSpec struct {
	// name is the base name of the .crt and .key files in the PKI directory.
	name  string
	cn    string
	orgs  []string
	usage x509.ExtKeyUsage
	// hosts are the SANs of a serving certificate.
	hosts []string
	// kubeconfig is the file name of the kubeconfig for a client identity,
	// empty when the identity gets none.
	kubeconfig string
	// frontProxy: signed by the front-proxy CA, not the cluster CA.
	frontProxy bool
	// etcd: signed by the etcd CA, not the cluster CA.
	etcd bool
	// peer: usable both to serve and as a client (ServerAuth and
	// ClientAuth), as etcd members need; usage is then ServerAuth.
	peer bool
}

// usages returns the extended key usages spec's certificate must allow.
func (s certSpec) usages() []x509.ExtKeyUsage {
	if s.peer {
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	return []x509.ExtKeyUsage{s.usage}
}

// plan lists every certificate Generate maintains.
func plan(opts Options, h host) ([]certSpec, error) {
	apiSANs, err := apiServerSANs(opts, h)
	if err != nil {
		return nil, err
	}
	specs := []certSpec{
		{name: "apiserver", cn: APIServerCommonName, usage: x509.ExtKeyUsageServerAuth, hosts: apiSANs},
		{name: "apiserver-kubelet-client", cn: APIServerKubeletClientCommonName, orgs: []string{MastersGroup}, usage: x509.ExtKeyUsageClientAuth},
		{name: "admin", cn: AdminCommonName, orgs: []string{MastersGroup}, usage: x509.ExtKeyUsageClientAuth, kubeconfig: "admin.kubeconfig"},
		{name: "controller-manager", cn: ControllerManagerCommonName, usage: x509.ExtKeyUsageClientAuth, kubeconfig: "controller-manager.kubeconfig"},
		{name: "scheduler", cn: SchedulerCommonName, usage: x509.ExtKeyUsageClientAuth, kubeconfig: "scheduler.kubeconfig"},
		{name: "proxy", cn: ProxyCommonName, usage: x509.ExtKeyUsageClientAuth, kubeconfig: "proxy.kubeconfig"},
		{name: "dns", cn: DNSCommonName, usage: x509.ExtKeyUsageClientAuth, kubeconfig: "dns.kubeconfig"},
		{name: "front-proxy-client", cn: FrontProxyClientCommonName, usage: x509.ExtKeyUsageClientAuth, frontProxy: true},
	}
	for _, node := range opts.Nodes {
		sans, err := kubeletSANs(opts, h, node)
		if err != nil {
			return nil, err
		}
		specs = append(specs,
			certSpec{
				name: "kubelet-" + node + "-client", cn: NodeCommonNamePrefix + node, orgs: []string{NodesGroup},
				usage: x509.ExtKeyUsageClientAuth, kubeconfig: "kubelet-" + node + ".kubeconfig",
			},
			certSpec{
				name: "kubelet-" + node, cn: NodeCommonNamePrefix + node, orgs: []string{NodesGroup},
				usage: x509.ExtKeyUsageServerAuth, hosts: sans,
			},
		)
	}
	etcdSpecs, err := etcdPlan(opts)
	if err != nil {
		return nil, err
	}
	specs = append(specs, etcdSpecs...)
	seen := map[string]bool{caName: true, frontProxyCAName: true, etcdCAName: true, "sa": true}
	for _, s := range specs {
		if seen[s.name] {
			return nil, fmt.Errorf("node names %v and etcd members would write %s twice", opts.Nodes, s.name+".crt")
		}
		seen[s.name] = true
	}
	return specs, nil
}

// etcdPlan lists the certificates of the external etcd cluster: per member
// a serving and a peer certificate, and the API server's client
// certificate; none when opts has no etcd members.
func etcdPlan(opts Options) ([]certSpec, error) {
	if len(opts.EtcdMembers) == 0 {
		return nil, nil
	}
	members := make([]string, 0, len(opts.EtcdMembers))
	for m := range opts.EtcdMembers {
		members = append(members, m)
	}
	slices.Sort(members)
	var specs []certSpec
	for _, m := range members {
		peerSANs, err := normalizeHosts(opts.EtcdMembers[m])
		if err != nil {
			return nil, err
		}
		serverSANs, err := normalizeHosts(append([]string{"localhost", "127.0.0.1", "::1"}, peerSANs...))
		if err != nil {
			return nil, err
		}
		specs = append(specs,
			certSpec{name: "etcd-" + m + "-server", cn: m, usage: x509.ExtKeyUsageServerAuth, peer: true, etcd: true, hosts: serverSANs},
			certSpec{name: "etcd-" + m + "-peer", cn: m, usage: x509.ExtKeyUsageServerAuth, peer: true, etcd: true, hosts: peerSANs},
		)
	}
	specs = append(specs, certSpec{name: "apiserver-etcd-client", cn: APIServerEtcdClientCommonName, usage: x509.ExtKeyUsageClientAuth, etcd: true})
	return specs, nil
}

// Generate writes the cluster PKI and kubeconfigs described by opts, keeping
// every file on disk that is still right (see the package documentation).
// The Result lists every file with what was done to it.
func Generate(ctx context.Context, opts Options) (*Result, error) {
	logger := klog.FromContext(ctx)
	if opts.Dir == "" {
		return nil, errors.New("no PKI directory given")
	}
	h, err := discoverHost()
	if err != nil {
		return nil, err
	}
	if err := opts.complete(h); err != nil {
		return nil, err
	}
	specs, err := plan(opts, h)
	if err != nil {
		return nil, err
	}
	// The kubeconfig directory first: it is usually the parent of the PKI
	// directory and should not inherit the PKI directory's private mode.
	if err := mkdirAll(opts.KubeconfigDir, confDirMode); err != nil {
		return nil, err
	}
	if err := mkdirAll(opts.Dir, pkiDirMode); err != nil {
		return nil, err
	}

	g := &generator{opts: opts, logger: logger, now: time.Now(), result: &Result{}}
	ca, err := g.ensureCA()
	if err != nil {
		return nil, err
	}
	frontProxyCA, err := g.ensureNamedCA(frontProxyCAName, FrontProxyCACommonName)
	if err != nil {
		return nil, err
	}
	var etcdCA *CA
	if len(opts.EtcdMembers) > 0 {
		if etcdCA, err = g.ensureNamedCA(etcdCAName, EtcdCACommonName); err != nil {
			return nil, err
		}
	}
	if err := g.ensureSAKey(); err != nil {
		return nil, err
	}
	for _, spec := range specs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		signer := ca
		switch {
		case spec.frontProxy:
			signer = frontProxyCA
		case spec.etcd:
			signer = etcdCA
		}
		kp, err := g.ensureCert(signer, spec)
		if err != nil {
			return nil, err
		}
		if spec.kubeconfig != "" {
			if err := g.ensureKubeconfig(ca, spec, kp); err != nil {
				return nil, err
			}
		}
	}
	return g.result, nil
}

func mkdirAll(dir string, mode fs.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return fmt.Errorf("creating directory: %w", err)
	}
	return nil
}

// generator carries the state of one Generate run.
type generator struct {
	opts   Options
	logger klog.Logger
	now    time.Time
	result *Result
}

func (g *generator) record(path string, action Action, reason string) {
	g.result.record(g.logger, path, action, reason)
}

// ensureCA loads the CA, or creates it when both of its files are missing or
// Force is set. A half-present or expired CA is an error: replacing it would
// silently invalidate every certificate and kubeconfig handed out.
func (g *generator) ensureCA() (*CA, error) { return g.ensureNamedCA(caName, DefaultCACommonName) }

// ensureNamedCA is ensureCA for the CA in <name>.crt and <name>.key.
func (g *generator) ensureNamedCA(name, cn string) (*CA, error) {
	dir := g.opts.Dir
	certPath, keyPath := CertFile(dir, name), KeyFile(dir, name)
	reason := "forced"
	if !g.opts.Force {
		certExists, keyExists, err := caFilesState(dir, name)
		if err != nil {
			return nil, err
		}
		switch {
		case certExists && keyExists:
			ca, err := loadNamedCA(dir, name)
			if err != nil {
				return nil, fmt.Errorf("%w (run with --force to create a new CA and re-issue everything)", err)
			}
			if g.now.After(ca.Cert.NotAfter) {
				return nil, fmt.Errorf("CA %s expired at %s (run with --force to create a new CA and re-issue everything)", certPath, ca.Cert.NotAfter.Format(time.RFC3339))
			}
			if err := ensureMode(keyPath, keyFileMode); err != nil {
				return nil, err
			}
			g.record(certPath, Kept, "")
			g.record(keyPath, Kept, "")
			return ca, nil
		case certExists != keyExists:
			present, absent := certPath, keyPath
			if keyExists {
				present, absent = keyPath, certPath
			}
			return nil, fmt.Errorf("found %s but not %s: restore it, or run with --force to create a new CA and re-issue everything", present, absent)
		}
		reason = "missing"
	}
	ca, err := NewCA(cn)
	if err != nil {
		return nil, err
	}
	if err := WriteKeyPair(dir, name, &KeyPair{Cert: ca.Cert, Key: ca.Key}); err != nil {
		return nil, err
	}
	g.record(certPath, Written, reason)
	g.record(keyPath, Written, reason)
	return ca, nil
}

// ensureSAKey keeps or creates sa.key and makes sa.pub match it.
func (g *generator) ensureSAKey() error {
	keyPath := filepath.Join(g.opts.Dir, "sa.key")
	pubPath := filepath.Join(g.opts.Dir, "sa.pub")

	var (
		sa     *saKeyPair
		reason = "forced"
	)
	if !g.opts.Force {
		var err error
		sa, err = loadSAKey(keyPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			reason = "missing"
		case err != nil:
			reason = fmt.Sprintf("unreadable: %v", err)
		}
	}
	if sa != nil {
		if err := ensureMode(keyPath, keyFileMode); err != nil {
			return err
		}
		g.record(keyPath, Kept, "")
	} else {
		var err error
		if sa, err = newSAKeyPair(); err != nil {
			return err
		}
		if err := writeFileAtomic(keyPath, sa.privatePEM(), keyFileMode); err != nil {
			return err
		}
		g.record(keyPath, Written, reason)
	}

	pub, err := sa.publicPEM()
	if err != nil {
		return err
	}
	if !g.opts.Force {
		same, err := fileEquals(pubPath, pub)
		if err != nil {
			return err
		}
		if same {
			g.record(pubPath, Kept, "")
			return nil
		}
		if reason, err = writeReason(pubPath, "does not match sa.key"); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(pubPath, pub, certFileMode); err != nil {
		return err
	}
	g.record(pubPath, Written, reason)
	return nil
}

// ensureCert keeps the pair on disk if it is still right for spec, and
// issues a new one otherwise.
func (g *generator) ensureCert(ca *CA, spec certSpec) (*KeyPair, error) {
	dir := g.opts.Dir
	certPath, keyPath := CertFile(dir, spec.name), KeyFile(dir, spec.name)
	reason := "forced"
	if !g.opts.Force {
		kp, err := LoadKeyPair(dir, spec.name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			reason = "missing"
		case err != nil:
			reason = fmt.Sprintf("unreadable: %v", err)
		default:
			reason = g.checkLeaf(ca, kp.Cert, spec)
		}
		if reason == "" {
			if err := ensureMode(keyPath, keyFileMode); err != nil {
				return nil, err
			}
			g.record(certPath, Kept, "")
			g.record(keyPath, Kept, "")
			return kp, nil
		}
	}

	var (
		kp  *KeyPair
		err error
	)
	switch {
	case spec.peer:
		kp, err = IssuePeerCert(ca, spec.cn, spec.orgs, spec.hosts)
	case spec.usage == x509.ExtKeyUsageServerAuth:
		kp, err = IssueServingCert(ca, spec.cn, spec.orgs, spec.hosts)
	default:
		kp, err = IssueClientCert(ca, spec.cn, spec.orgs)
	}
	if err != nil {
		return nil, err
	}
	if err := WriteKeyPair(dir, spec.name, kp); err != nil {
		return nil, err
	}
	g.record(certPath, Written, reason)
	g.record(keyPath, Written, reason)
	return kp, nil
}

// checkLeaf returns why cert no longer does for spec, or "" if it does.
func (g *generator) checkLeaf(ca *CA, cert *x509.Certificate, spec certSpec) string {
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
		return "not signed by the current CA"
	}
	if g.now.Before(cert.NotBefore) {
		return "not yet valid"
	}
	if g.now.After(cert.NotAfter) {
		return "expired"
	}
	// Renew when close to expiry, unless a new certificate could not last
	// longer anyway because the CA ends first.
	if cert.NotAfter.Sub(g.now) < RenewBefore && cert.NotAfter.Before(ca.Cert.NotAfter) {
		return fmt.Sprintf("expires within %d days", int(RenewBefore.Hours()/24))
	}
	// One Verify per usage: Verify accepts a chain that allows any one of
	// the usages it is given.
	for _, usage := range spec.usages() {
		if _, err := cert.Verify(x509.VerifyOptions{
			Roots:       ca.Pool(),
			CurrentTime: g.now,
			KeyUsages:   []x509.ExtKeyUsage{usage},
		}); err != nil {
			return fmt.Sprintf("does not verify for its use: %v", err)
		}
	}
	if cert.Subject.CommonName != spec.cn || !slices.Equal(cert.Subject.Organization, spec.orgs) {
		return fmt.Sprintf("subject is CN=%s O=%v, want CN=%s O=%v", cert.Subject.CommonName, cert.Subject.Organization, spec.cn, spec.orgs)
	}
	if missing := missingSANs(cert, spec.hosts); len(missing) > 0 {
		return "SANs not covered: " + strings.Join(missing, ", ")
	}
	return ""
}

// ensureKubeconfig writes the kubeconfig for spec's identity unless the file
// on disk already has exactly the wanted content.
func (g *generator) ensureKubeconfig(ca *CA, spec certSpec, kp *KeyPair) error {
	path := filepath.Join(g.opts.KubeconfigDir, spec.kubeconfig)
	data, err := renderKubeconfig(g.opts.Server, ca, spec.cn, kp)
	if err != nil {
		return err
	}
	reason := "forced"
	if !g.opts.Force {
		same, err := fileEquals(path, data)
		if err != nil {
			return err
		}
		if same {
			if err := ensureMode(path, keyFileMode); err != nil {
				return err
			}
			g.record(path, Kept, "")
			return nil
		}
		if reason, err = writeReason(path, "out of date"); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(path, data, keyFileMode); err != nil {
		return err
	}
	g.record(path, Written, reason)
	return nil
}

// writeReason returns why path is about to be written: "missing" if it does
// not exist, otherwise the given reason.
func writeReason(path, reasonIfPresent string) (string, error) {
	ok, err := exists(path)
	if err != nil {
		return "", err
	}
	if !ok {
		return "missing", nil
	}
	return reasonIfPresent, nil
}
