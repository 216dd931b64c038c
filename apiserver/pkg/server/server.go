package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/klog/v2"
	psadmissionapi "k8s.io/pod-security-admission/admission/api"

	"skiff.dev/apiserver/pkg/admission"
	"skiff.dev/apiserver/pkg/admission/validatingpolicy"
	"skiff.dev/apiserver/pkg/aggregator"
	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/audit"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/endpoints"
	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/kubeletclient"
	"skiff.dev/apiserver/pkg/metrics"
	"skiff.dev/apiserver/pkg/metricsserver"
	"skiff.dev/apiserver/pkg/openapi"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/core/service"
	rbacregistry "skiff.dev/apiserver/pkg/registry/rbac"
	"skiff.dev/apiserver/pkg/storage/cacher"
	"skiff.dev/apiserver/pkg/storage/etcd3"
	"skiff.dev/component-base/tracing"
)

// Version is what /version reports: the Kubernetes API level skiff serves.
var Version = version.Info{
	Major: "1", Minor: "32", GitVersion: "v1.32.0-skiff", GitCommit: "", GitTreeState: "clean",
	BuildDate: "", GoVersion: "", Compiler: "gc", Platform: "linux/amd64",
}

// Server is a built API server, ready to Run.
type Server struct {
	opts      *Options
	etcd      *etcdBackend
	codecs    *api.Codecs
	stores    []*registry.Store
	cachers   []*cacher.Cacher
	handler   *endpoints.Handler
	metrics   *metrics.Metrics
	authn     *authn.Authenticator
	listener  net.Listener
	tlsCfg    *tls.Config
	http      *http.Server
	shutdown  chan struct{}
	advertise string
	allocator *service.ServiceAllocator
	// leases is this server's master lease and everyone's.
	leases *masterLeases

	authorizer authz.Union
	rbac       *authz.RBAC
	nodeAuthz  *authz.Node
	workers    *fastpath.RequestWorkers
	// authzSynced is closed once the authorizers have read their objects.
	authzSynced chan struct{}
	// bootstrapped is closed once the bootstrap objects exist.
	bootstrapped chan struct{}
	audit        *audit.Logger
	admission    admission.Chain
	// compiledAdmission is admission as the stores run it.
	compiledAdmission *admission.Compiled
	nsLifecycle       *admission.NamespaceLifecycle
	webhooks          *admission.Webhooks
	policies          *validatingpolicy.Plugin
	// resources is the table of built-in kinds; openapi serves their
	// documents with those of the custom resources.
	resources []*registry.Resource
	openapi   *openapi.Dynamic
	// openapiStale asks for a rebuild of the OpenAPI documents.
	openapiStale chan struct{}
	// crdSynced is closed once the stored CRDs' resources are served.
	crdSynced chan struct{}
	// aggregator proxies the group-versions of APIServices with a service.
	aggregator *aggregator.Aggregator
	// extensionAuth is kube-system/extension-apiserver-authentication.
	extensionAuth *corev1.ConfigMap
	// metricsAPI is the built-in metrics.k8s.io (nil: off).
	metricsAPI *metricsserver.Server
	// tracerProvider exports the requests' spans (no-op: tracing off).
	tracerProvider tracing.Provider
}

// Setup builds the server: etcd, stores, caches, handlers, listener.
func Setup(ctx context.Context, o *Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: o, codecs: api.NewCodecs(), metrics: metrics.New(), shutdown: make(chan struct{}),
		authzSynced: make(chan struct{}), bootstrapped: make(chan struct{}), openapiStale: make(chan struct{}, 1), crdSynced: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()

	if err := s.setupTracing(ctx, o); err != nil {
		return nil, err
	}
	var err error
	if len(o.EtcdServers) == 0 {
		s.etcd, err = startEmbeddedEtcd(ctx, o.EtcdDataDir)
	} else {
		s.etcd, err = connectEtcd(ctx, o)
	}
	if err != nil {
		return nil, err
	}

	cidr, _ := netip.ParsePrefix(o.ServiceClusterIPRange)
	lo, hi, _ := parsePortRange(o.ServiceNodePortRange)
	s.allocator = &service.ServiceAllocator{Client: s.etcd.client, CIDR: cidr.Masked()}
	s.allocator.NodePort.Base, s.allocator.NodePort.Size = lo, hi-lo+1

	s.nsLifecycle = admission.NewNamespaceLifecycle(func(ctx context.Context, name string) (*corev1.Namespace, error) {
		obj, err := s.store("", "namespaces").Get(ctx, "", name)
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Namespace), nil
	}, SystemNamespaces...)
	// Upstream's order of the plugins skiff has.
	s.webhooks = admission.NewWebhooks(s.nsLifecycle.Labels, s.resolveWebhookService)
	objs := newObjects(s)
	quota := &admission.ResourceQuota{Objects: objs, Update: s.updateQuota}
	if s.policies, err = s.newPolicyPlugin(objs); err != nil {
		return nil, err
	}
	podSecurity, err := admission.NewPodSecurity(admission.PodSecurityConfig{
		Enforce: o.PodSecurityDefaultLevel,
		Exemptions: psadmissionapi.PodSecurityExemptions{Usernames: o.PodSecurityExemptUsernames,
			Namespaces: o.PodSecurityExemptNamespaces, RuntimeClasses: o.PodSecurityExemptRuntimeClasses},
	}, s.nsLifecycle.Labels, objs, s.metrics.Registry)
	if err != nil {
		return nil, err
	}
	for _, p := range []admission.Plugin{
		s.nsLifecycle,
		&admission.LimitRanger{Objects: objs},
		&admission.ServiceAccount{Objects: objs},
		podSecurity,
		&admission.Priority{Objects: objs},
		&admission.DefaultTolerationSeconds{Seconds: 300},
		&admission.DefaultStorageClass{Objects: objs},
		&admission.StorageObjectInUseProtection{},
		&admission.PersistentVolumeClaimResize{Objects: objs},
		&admission.RuntimeClass{Objects: objs},
		admission.MutatingWebhooks{Webhooks: s.webhooks},
		s.policies,
		admission.ValidatingWebhooks{Webhooks: s.webhooks},
		quota,
	} {
		if !slices.Contains(o.DisableAdmissionPlugins, p.Name()) {
			s.admission = append(s.admission, p)
		}
	}
	s.compiledAdmission = s.admission.Compile()

	resources := BuiltinResources()
	s.resources = resources
	hookDeps := registry.HookDeps{ServiceIPs: s.allocator, QuotaUsage: quota, RBAC: &rbacregistry.Escalation{
		Authorizer: func() authz.Authorizer { return s.authorizer },
		Rules:      func() rbacregistry.RuleResolver { return s.rbac },
		Stored:     func(resource string) rbacregistry.Getter { return s.store(rbacregistry.Group, resource) },
	}}
	var shared []*registry.Resource
	for _, r := range resources {
		if r.SharedStorage != nil {
			shared = append(shared, r)
			continue
		}
		info, okInfo := runtimeProtobuf(s.codecs)
		if !okInfo {
			return nil, errors.New("no protobuf serializer in the codec factory")
		}
		codec := s.codecs.Factory.CodecForVersions(info, info, r.GroupVersion(), r.GroupVersion())
		store := etcd3.New(etcd3.Config{
			Client: s.etcd.client, Codec: codec, NewFunc: r.New, NewListFunc: r.NewList,
			ResourcePrefix: "/registry/" + r.EtcdPrefix + "/", GroupResource: r.GroupResource(), GVK: r.GroupVersionKind(),
			RequestTimeout: o.EtcdRequestTimeout, Observe: s.metrics.ObserveEtcd,
		})
		reg := &registry.Store{R: r}
		gvk := r.GroupVersionKind()
		c := cacher.New(cacher.Config{
			Store: store, GetAttrs: reg.AttrFunc(), NewFunc: r.New, NewListFunc: r.NewList,
			WindowSize: o.WatchCacheSize, BookmarkInterval: o.BookmarkInterval, GVK: gvk,
			OnWatchersChanged: func(n int) {
				s.metrics.RegisteredWatchers.WithLabelValues(gvk.Group, gvk.Version, gvk.Kind).Set(float64(n))
			},
			OnEvent: watchCacheEvents(s.metrics, r.GroupResource()),
			// The fast path of a create's object kept by the cache.
			KeepCreated: !fastpath.DecodingDefaults(r.GroupVersion()),
		})
		reg.Storage = c
		reg.Admission = s.compiledAdmission
		reg.Created = func(ns string) { objs.created(r.Group, r.Resource, ns) }
		if r.Hooks != nil {
			reg.Hooks = r.Hooks(hookDeps)
		}
		s.stores = append(s.stores, reg)
		s.cachers = append(s.cachers, c)
	}
	if err := s.addSharedStores(shared); err != nil {
		return nil, err
	}
	s.handler = endpoints.NewHandler(s.codecs, s.stores, s.shutdown)
	s.handler.MinRequestTimeout = o.MinRequestTimeout
	s.handler.ProxyTransport = endpoints.NewProxyTransport()
	if s.handler.Kubelet, err = kubeletclient.New(kubeletclient.Config{
		CertFile: o.KubeletClientCertificate, KeyFile: o.KubeletClientKey,
		CAFile: o.KubeletCertificateAuthority, AddressTypes: o.KubeletPreferredAddressTypes,
	}); err != nil {
		return nil, err
	}
	s.metricsAPI = s.newMetricsAPI(o)

	// TLS and authentication.
	var pool *x509.CertPool
	if o.ClientCAFile != "" {
		pem, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --client-ca-file: %w", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificate", o.ClientCAFile)
		}
	}
	if s.authorizer, err = s.buildAuthorizer(o.AuthorizationModes); err != nil {
		return nil, err
	}
	if o.AuditLogPath != "" {
		if s.audit, err = audit.New(audit.Options{Path: o.AuditLogPath, MaxSizeMB: o.AuditLogMaxSize, MaxBackups: o.AuditLogMaxBackup, MaxAgeDays: o.AuditLogMaxAge}); err != nil {
			return nil, err
		}
	}
	if s.authn, err = authn.New(pool, o.TokenAuthFile); err != nil {
		return nil, fmt.Errorf("--token-auth-file: %w", err)
	}
	if s.authn.RequestHeader, err = requestHeaderAuthentication(o); err != nil {
		return nil, err
	}
	if err := s.setupServiceAccountTokens(o); err != nil {
		return nil, err
	}
	s.authn.Anonymous = o.AnonymousAuth
	if o.EnableBootstrapTokenAuth {
		s.authn.Tokens = append(s.authn.Tokens, authn.BootstrapTokens(s.bootstrapTokenSecret, time.Now))
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	s.tlsCfg = &tls.Config{
		Certificates: []tls.Certificate{cert},
		// Verified by the authenticator, so that a bad certificate gets a
		// 401 Status rather than a failed handshake.
		ClientAuth: tls.RequestClientCert,
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
	}
	s.listener, err = net.Listen("tcp", net.JoinHostPort(o.BindAddress, fmt.Sprint(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("listening on %s:%d: %w", o.BindAddress, o.SecurePort, err)
	}
	s.advertise = o.AdvertiseAddress
	if s.advertise == "" {
		if s.advertise = defaultAdvertiseAddress(); s.advertise == "" {
			return nil, fmt.Errorf("no --advertise-address given and no non-loopback IPv4 address found on this host: the kubernetes Service's endpoints need one")
		}
	}
	if ip := net.ParseIP(s.advertise); ip.IsLoopback() || ip.IsUnspecified() {
		return nil, fmt.Errorf("--advertise-address %s: the kubernetes Service's endpoints may not be a loopback or unspecified address", s.advertise)
	}
	info, _ := runtimeProtobuf(s.codecs)
	s.leases = &masterLeases{
		client: s.etcd.client, ttl: MasterLeaseTTL,
		codec: s.codecs.Factory.CodecForVersions(info, info, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion),
		self:  apiServerEndpoint{IP: s.advertise, Port: int32(s.Port())},
	}
	if s.aggregator, err = s.newAggregator(o); err != nil {
		return nil, err
	}
	s.openapi = openapi.NewDynamic(func() (*openapi.Spec, error) { return openapi.New(s.openAPIResources(resources)) })
	s.http = &http.Server{
		Handler:           s.buildHandler(resources, s.openapi),
		ReadHeaderTimeout: 30 * time.Second,
		// Upstream's --http2-max-streams-per-connection: informers multiplex
		// many watches over one connection.
		HTTP2:       &http.HTTP2Config{MaxConcurrentStreams: 1000},
		ErrorLog:    nil,
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	ok = true
	return s, nil
}

// addSharedStores serves kinds stored as another kind (events.k8s.io Events)
// from that kind's storage and cache.
func (s *Server) addSharedStores(shared []*registry.Resource) error {
	for _, r := range shared {
		var base *registry.Store
		for _, st := range s.stores {
			if st.R.Group == r.SharedStorage.Group && st.R.Resource == r.SharedStorage.Resource {
				base = st
			}
		}
		if base == nil {
			return fmt.Errorf("%s: no storage of %s/%s to share", r.GroupResource(), r.SharedStorage.Group, r.SharedStorage.Resource)
		}
		s.stores = append(s.stores, &registry.Store{R: r, Storage: registry.NewSharedStorage(base.Storage, r.SharedStorage), Admission: s.compiledAdmission})
	}
	return nil
}

// Port is the port the server listens on.
func (s *Server) Port() int { return s.listener.Addr().(*net.TCPAddr).Port }

// EtcdEndpoints are the client URLs of the embedded etcd, or the
// --etcd-servers (tests start a second server on the first one's etcd).
func (s *Server) EtcdEndpoints() []string {
	if s.etcd.embedded == nil {
		return s.opts.EtcdServers
	}
	var out []string
	for _, u := range s.etcd.embedded.Config().ListenClientUrls {
		out = append(out, u.String())
	}
	return out
}

// EtcdClient exposes the etcd client (tests read raw keys through it).
func (s *Server) EtcdClient() *clientv3.Client { return s.etcd.client }

func (s *Server) close() {
	if s.workers != nil {
		s.workers.Stop()
	}
	if s.listener != nil {
		_ = s.listener.Close()
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
	if s.audit != nil {
		_ = s.audit.Close()
	}
	tracing.Shutdown(context.Background(), s.tracerProvider)
}

// Run serves until ctx is cancelled, then shuts down in order.
func (s *Server) Run(ctx context.Context) error {
	defer s.close()
	logger := klog.FromContext(ctx)
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range s.cachers {
		c := c
		g.Go(func() error { return c.Start(gctx) })
	}
	g.Go(func() error {
		err := s.http.Serve(tls.NewListener(s.listener, s.tlsCfg))
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	})
	g.Go(func() error {
		<-gctx.Done()
		close(s.shutdown)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(gctx), s.opts.ShutdownGracePeriod)
		defer cancel()
		return s.http.Shutdown(sctx)
	})
	g.Go(func() error { return s.runBootstrap(gctx) })
	g.Go(func() error { return s.runAuthorizerFeeds(gctx) })
	g.Go(func() error { return s.runServiceRepair(gctx) })
	g.Go(func() error { return s.newCRDController().Run(gctx) })
	g.Go(func() error { return s.runOpenAPIRebuilds(gctx) })
	g.Go(func() error { return s.runAggregator(gctx) })
	if s.metricsAPI != nil {
		g.Go(func() error { return s.metricsAPI.Start(gctx) })
	}
	if s.opts.EtcdCompactionInterval > 0 {
		g.Go(func() error { return runCompactor(gctx, s.etcd.client, s.opts.EtcdCompactionInterval) })
	}
	logger.Info("serving", "address", s.listener.Addr().String(), "advertise", s.advertise)
	return g.Wait()
}

// watchCacheEvents counts one watch cache's events.
func watchCacheEvents(m *metrics.Metrics, gr schema.GroupResource) func() {
	return m.WatchCacheEvents.WithLabelValues(gr.Group, gr.Resource).Inc
}

func runtimeProtobuf(c *api.Codecs) (serializerInfo, bool) {
	for _, i := range c.Factory.SupportedMediaTypes() {
		if i.MediaType == "application/vnd.kubernetes.protobuf" {
			return i.Serializer, true
		}
	}
	return nil, false
}

// buildHandler puts the routes behind recovery, metrics and authentication.
func (s *Server) buildHandler(resources []*registry.Resource, spec *openapi.Dynamic) http.Handler {
	r := mux.NewRouter()
	r.UseEncodedPath()
	s.handler.Install(r)
	s.handler.InstallReviews(r, s.Authorize, s.authorizer.ResolveRules)
	s.handler.InstallComponentStatuses(r, s.componentChecks())
	s.handler.InstallTokenReview(r, s.authn.AuthenticateToken, []string{s.opts.ServiceAccountIssuer})
	discovery := endpoints.NewDiscovery(s.handler, resources, Version, net.JoinHostPort(s.advertise, fmt.Sprint(s.Port())))
	discovery.Aggregated = discoveryGroups{agg: s.aggregator, metrics: s.metricsAPI}
	discovery.Install(r)
	r.HandleFunc("/openapi/v2", spec.ServeV2).Methods(http.MethodGet)
	r.HandleFunc("/openapi/v3", spec.ServeV3Discovery).Methods(http.MethodGet)
	r.PathPrefix("/openapi/v3/").HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		spec.ServeV3GroupVersion(w, req, strings.TrimPrefix(req.URL.Path, "/openapi/v3/"))
	}).Methods(http.MethodGet)
	s.installOpenIDMetadata(r)
	r.Handle("/metrics", promhttp.HandlerFor(s.metrics.Registry, promhttp.HandlerOpts{})).Methods(http.MethodGet)
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		p := p
		r.HandleFunc(p, s.health(p)).Methods(http.MethodGet)
		r.HandleFunc(p+"/{check}", s.health(p)).Methods(http.MethodGet)
	}
	// Last: these routes match any group and version under /apis.
	s.handler.InstallCustom(r)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeStatus(w, apierrors.NewGenericServerResponse(http.StatusNotFound, "get", schemaGR(), "", "the server could not find the requested resource", 0, false).Status())
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeStatus(w, apierrors.NewMethodNotSupported(schemaGR(), req.Method).Status())
	})
	// The aggregator sees every authenticated, authorized request first:
	// the group-versions of APIServices with a service are proxied.
	s.workers = fastpath.NewRequestWorkers(requestWorkerLimit)
	return s.withTracing(s.workers.Wrap(s.withFilters(s.aggregator.Handler(s.withMetricsAPI(s.handler.Routes(r))))))
}

// requestWorkerLimit bounds the goroutines kept for short requests; more
// concurrent requests than this run on their own goroutines.
const requestWorkerLimit = 128

// statusRecorder captures the code for metrics and keeps Flush working.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Hijack hands the connection to an upgrade (exec, attach, portforward
// proxied to a kubelet), which answers 101 itself.
func (w *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.code == 0 {
		w.code = http.StatusSwitchingProtocols
	}
	return conn, brw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func isHealthPath(p string) bool {
	for _, h := range []string{"/healthz", "/livez", "/readyz"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}

func (s *Server) withFilters(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		ctx, notes := admission.WithNotes(r.Context())
		w = &notesWriter{statusRecorder: rec, notes: notes}
		w.Header().Set("Audit-Id", uuid.NewString())
		req, info := endpoints.WithRequestInfoHolder(r.WithContext(ctx))
		var requester, effective *authn.User
		defer func() {
			if s.audit != nil && !isHealthPath(r.URL.Path) {
				s.auditRequest(req, w.Header().Get("Audit-Id"), requester, effective, rec.code, start, notes.AuditAnnotations())
			}
		}()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				klog.FromContext(req.Context()).Error(fmt.Errorf("%v", p), "panic serving a request", "method", req.Method, "path", req.URL.Path, "stack", string(debug.Stack()))
				if rec.code == 0 {
					writeStatus(w, apierrors.NewInternalError(fmt.Errorf("the server could not complete the request")).Status())
				}
			}
			if ri := info(); ri != nil {
				traceRequest(req.Context(), ri, rec.code)
				verb := strings.ToUpper(ri.Verb)
				if verb == "CREATE" {
					verb = "POST"
				} else if verb == "UPDATE" {
					verb = "PUT"
				}
				dry := ""
				if req.URL.Query().Has("dryRun") {
					dry = "All"
				}
				s.metrics.ObserveRequest(verb, dry, ri.Group, ri.Version, ri.Resource, ri.Subresource, ri.Scope, rec.code, time.Since(start))
			}
		}()
		if !isHealthPath(r.URL.Path) {
			u, err := s.authn.Authenticate(r)
			if err != nil || u == nil {
				if err != nil {
					klog.FromContext(r.Context()).V(2).Info("authentication failed", "err", err, "remote", r.RemoteAddr)
				}
				writeStatus(w, apierrors.NewUnauthorized("Unauthorized").Status())
				return
			}
			requester = u
			if u, err = s.impersonate(req, u); err != nil {
				writeStatus(w, endpoints.ToStatusError(err, schemaGR(), "").Status())
				return
			}
			effective = u
			req = req.WithContext(authn.WithUser(req.Context(), u))
			a := attributesFor(req, u)
			ok, reason, err := s.Authorize(req.Context(), a)
			if err != nil {
				writeStatus(w, apierrors.NewInternalError(err).Status())
				return
			}
			if !ok {
				klog.FromContext(req.Context()).V(2).Info("forbidden", "user", u.Name, "verb", a.Verb, "resource", a.Resource, "namespace", a.Namespace, "name", a.Name, "reason", reason)
				writeStatus(w, forbidden(a, reason).Status())
				return
			}
		}
		next.ServeHTTP(w, req)
	})
}

// health serves /healthz, /livez and /readyz with upstream's text format;
// readiness requires etcd to answer.
func (s *Server) health(base string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		checks := []string{"ping"}
		if base != "/livez" {
			checks = append(checks, "etcd")
		}
		if base == "/readyz" {
			checks = append(checks, "authorization-synced", "rbac-bootstrap", "crd-informer-synced")
		}
		if only := mux.Vars(r)["check"]; only != "" {
			found := false
			for _, c := range checks {
				if c == only {
					found = true
				}
			}
			if !found {
				http.Error(w, "404 page not found", http.StatusNotFound)
				return
			}
			checks = []string{only}
		}
		var lines []string
		failed := false
		for _, c := range checks {
			err := s.check(r.Context(), c)
			if err != nil {
				failed = true
				lines = append(lines, fmt.Sprintf("[-]%s failed: reason withheld", c))
				klog.FromContext(r.Context()).Info("health check failed", "check", c, "err", err)
			} else {
				lines = append(lines, fmt.Sprintf("[+]%s ok", c))
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		name := strings.TrimPrefix(base, "/")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%s\n%s check failed\n", strings.Join(lines, "\n"), name)
			return
		}
		if r.URL.Query().Has("verbose") {
			fmt.Fprintf(w, "%s\n%s check passed\n", strings.Join(lines, "\n"), name)
			return
		}
		fmt.Fprint(w, "ok")
	}
}

func (s *Server) check(ctx context.Context, name string) error {
	switch name {
	case "ping":
		return nil
	case "authorization-synced":
		return closedOr(s.authzSynced, "the authorizers have not read their objects yet")
	case "rbac-bootstrap":
		return closedOr(s.bootstrapped, "the bootstrap objects are not all there yet")
	case "crd-informer-synced":
		return closedOr(s.crdSynced, "the custom resources of the stored CustomResourceDefinitions are not served yet")
	case "etcd":
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := s.etcd.client.Get(ctx, "health")
		return err
	}
	return fmt.Errorf("unknown check %q", name)
}

func writeStatus(w http.ResponseWriter, st metav1.Status) {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	st.Status = metav1.StatusFailure
	data, _ := jsonMarshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(data)
}

// defaultAdvertiseAddress is the first non-loopback IPv4 address of an up interface.
func defaultAdvertiseAddress() string {
	ifaces, err := net.Interfaces()
	if err == nil {
		for _, i := range ifaces {
			if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
				continue
			}
			addrs, _ := i.Addrs()
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLinkLocalUnicast() {
					return ipn.IP.String()
				}
			}
		}
	}
	return ""
}

// resolveWebhookService sends webhook calls for a Service to its cluster IP,
// checking the certificate for <name>.<namespace>.svc as upstream does.
func (s *Server) resolveWebhookService(ctx context.Context, namespace, name string, port int32, path string) (string, string, error) {
	obj, err := s.store("", "services").Get(ctx, namespace, name)
	if err != nil {
		return "", "", fmt.Errorf("webhook service %s/%s: %w", namespace, name, err)
	}
	svc := obj.(*corev1.Service)
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return "", "", fmt.Errorf("webhook service %s/%s has no cluster IP", namespace, name)
	}
	return fmt.Sprintf("https://%s%s", net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(port)), path), name + "." + namespace + ".svc", nil
}
