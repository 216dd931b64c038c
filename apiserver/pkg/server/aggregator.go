package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"skiff.dev/apiserver/pkg/aggregator"
	"skiff.dev/apiserver/pkg/authn"
	"skiff.dev/apiserver/pkg/registry"
)

// AutoRegisterLabel marks the local APIServices the server creates, as
// upstream's autoregister controller; "onstart" ones are put right at each
// start and left alone after.
const (
	AutoRegisterLabel   = "kube-aggregator.kubernetes.io/automanaged"
	autoRegisterOnStart = "onstart"
)

// newAggregator builds the aggregation layer with the front-proxy client
// certificate of --proxy-client-cert-file and --proxy-client-key-file.
func (s *Server) newAggregator(o *Options) (*aggregator.Aggregator, error) {
	cfg := aggregator.Config{
		UpdateStatus: s.updateAPIServiceStatus, ResyncInterval: o.APIServiceResyncInterval,
		Unavailable: s.metrics.AggregatorUnavailable, UnavailableTotal: s.metrics.AggregatorUnavailableTotal,
	}
	if o.ProxyClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.ProxyClientCertFile, o.ProxyClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading --proxy-client-cert-file and --proxy-client-key-file: %w", err)
		}
		cfg.ProxyClientCert = &cert
	}
	var err error
	if s.extensionAuth, err = extensionAuthConfigMap(o); err != nil {
		return nil, err
	}
	return aggregator.New(cfg), nil
}

// requestHeaderAuthentication is the front-proxy authentication of the
// --requestheader-* flags; nil without --requestheader-client-ca-file.
func requestHeaderAuthentication(o *Options) (*authn.RequestHeader, error) {
	if o.RequestHeaderClientCAFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(o.RequestHeaderClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("reading --requestheader-client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--requestheader-client-ca-file %s holds no PEM certificate", o.RequestHeaderClientCAFile)
	}
	return &authn.RequestHeader{
		ClientCAs: pool, AllowedNames: o.RequestHeaderAllowedNames,
		UsernameHeaders: o.RequestHeaderUsernameHeaders, UIDHeaders: o.RequestHeaderUIDHeaders,
		GroupHeaders: o.RequestHeaderGroupHeaders, ExtraHeaderPrefixes: o.RequestHeaderExtraHeadersPrefix,
	}, nil
}

// ExtensionAuthConfigMap names the ConfigMap aggregated API servers read
// to authenticate clients and the aggregator, as upstream's.
const (
	ExtensionAuthNamespace = "kube-system"
	ExtensionAuthConfigMap = "extension-apiserver-authentication"
	// extensionAuthReader is the Role that may read it (upstream's
	// bootstrap Role, bound by the aggregated servers' manifests).
	extensionAuthReader = "extension-apiserver-authentication-reader"
)

// extensionAuthConfigMap is what upstream's ClientCARegistrationHook
// publishes: the client CA, and the front-proxy CA with the names and
// headers to trust (lists as JSON arrays).
func extensionAuthConfigMap(o *Options) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ExtensionAuthNamespace, Name: ExtensionAuthConfigMap},
		Data:       map[string]string{},
	}
	if o.ClientCAFile != "" {
		pem, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --client-ca-file: %w", err)
		}
		cm.Data["client-ca-file"] = string(pem)
	}
	if o.RequestHeaderClientCAFile != "" {
		pem, err := os.ReadFile(o.RequestHeaderClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --requestheader-client-ca-file: %w", err)
		}
		cm.Data["requestheader-client-ca-file"] = string(pem)
		for k, v := range map[string][]string{
			"requestheader-allowed-names": o.RequestHeaderAllowedNames, "requestheader-username-headers": o.RequestHeaderUsernameHeaders,
			"requestheader-uid-headers": o.RequestHeaderUIDHeaders, "requestheader-group-headers": o.RequestHeaderGroupHeaders,
			"requestheader-extra-headers-prefix": o.RequestHeaderExtraHeadersPrefix,
		} {
			if v == nil {
				v = []string{}
			}
			data, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			cm.Data[k] = string(data)
		}
	}
	return cm, nil
}

// publishExtensionAuth writes extension-apiserver-authentication and the
// Role that may read it.
func (s *Server) publishExtensionAuth(ctx context.Context) error {
	want := s.extensionAuth
	err := s.upsert(ctx, s.store("", "configmaps"), want.Namespace, want.Name, want, func(cur runtime.Object) bool {
		return equality.Semantic.DeepEqual(cur.(*corev1.ConfigMap).Data, want.Data)
	})
	if err != nil {
		return fmt.Errorf("configmap %s/%s: %w", want.Namespace, want.Name, err)
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ExtensionAuthNamespace, Name: extensionAuthReader},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{ExtensionAuthConfigMap},
			Verbs: []string{"get", "list", "watch"},
		}},
	}
	err = s.upsert(ctx, s.store("rbac.authorization.k8s.io", "roles"), role.Namespace, role.Name, role, func(cur runtime.Object) bool {
		return equality.Semantic.DeepEqual(cur.(*rbacv1.Role).Rules, role.Rules)
	})
	if err != nil {
		return fmt.Errorf("role %s/%s: %w", role.Namespace, role.Name, err)
	}
	return nil
}

// runAggregator feeds the aggregator from the watch caches of APIServices,
// Services and EndpointSlices, puts the local APIServices in place, and
// runs the availability controller.
func (s *Server) runAggregator(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("aggregator")
	ctx = klog.NewContext(ctx, logger)
	feeds := []authzFeed{
		{store: s.store("apiregistration.k8s.io", "apiservices"), apply: s.aggregator.Apply, reset: s.aggregator.ResetAPIServices},
		{store: s.store("", "services"), apply: s.aggregator.Apply, reset: s.aggregator.ResetServices},
		{store: s.store("discovery.k8s.io", "endpointslices"), apply: s.aggregator.Apply, reset: s.aggregator.ResetEndpointSlices},
	}
	var wg sync.WaitGroup
	synced := make(chan struct{}, len(feeds))
	for _, f := range feeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.feed(ctx, f.store, f.fields, f.apply, f.reset, synced)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := s.registerLocalAPIServices(ctx); err != nil {
				logger.Error(err, "registering the local APIServices")
				return false, nil
			}
			if err := s.publishExtensionAuth(ctx); err != nil {
				logger.Error(err, "publishing the front-proxy authentication")
				return false, nil
			}
			return true, nil
		})
		if err == nil {
			logger.V(2).Info("local APIServices registered")
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.runCRDAPIServices(ctx)
	}()
	err := s.aggregator.Run(ctx)
	wg.Wait()
	return err
}

// localAPIServices are the APIServices of the built-in group-versions,
// with upstream's priorities.
func (s *Server) localAPIServices() []*apiregistrationv1.APIService {
	seen := map[schema.GroupVersion]bool{}
	gvs := []schema.GroupVersion{{Version: "v1"}, {Group: "authentication.k8s.io", Version: "v1"}, {Group: "authorization.k8s.io", Version: "v1"}}
	for _, r := range s.resources {
		gvs = append(gvs, r.GroupVersion())
	}
	var out []*apiregistrationv1.APIService
	for _, gv := range gvs {
		if seen[gv] {
			continue
		}
		seen[gv] = true
		group, version := registry.APIServicePriority(gv)
		out = append(out, &apiregistrationv1.APIService{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"},
			ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group, Labels: map[string]string{AutoRegisterLabel: autoRegisterOnStart}},
			Spec: apiregistrationv1.APIServiceSpec{
				Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: group, VersionPriority: version,
			},
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// registerLocalAPIServices creates the local APIServices, or puts back
// their spec and label, as upstream's autoregister controller does for
// its "onstart" APIServices.
func (s *Server) registerLocalAPIServices(ctx context.Context) error {
	st := s.store("apiregistration.k8s.io", "apiservices")
	for _, want := range s.localAPIServices() {
		err := s.upsert(ctx, st, "", want.Name, want, func(cur runtime.Object) bool {
			c := cur.(*apiregistrationv1.APIService)
			return c.Labels[AutoRegisterLabel] == autoRegisterOnStart && equality.Semantic.DeepEqual(c.Spec, want.Spec)
		})
		if err != nil {
			return fmt.Errorf("apiservice %s: %w", want.Name, err)
		}
	}
	return nil
}

// updateAPIServiceStatus sets an APIService's Available condition through
// its status subresource.
func (s *Server) updateAPIServiceStatus(ctx context.Context, name string, cond apiregistrationv1.APIServiceCondition) error {
	st := s.store("apiregistration.k8s.io", "apiservices")
	_, _, err := st.Update(ctx, "", name, func(_ context.Context, current runtime.Object, _ bool) (runtime.Object, error) {
		api := current.DeepCopyObject().(*apiregistrationv1.APIService)
		conds := api.Status.Conditions[:0]
		for _, c := range api.Status.Conditions {
			if c.Type != cond.Type {
				conds = append(conds, c)
				continue
			}
			if c.Status == cond.Status {
				// The transition is when the status last changed.
				cond.LastTransitionTime = c.LastTransitionTime
			}
		}
		api.Status.Conditions = append(conds, cond)
		return api, nil
	}, st.R.StatusStrategy, false)
	return err
}
