package server

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/apis/validation"
	"skiff.dev/apiserver/pkg/authz"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/storage"
)

// SystemNamespaces exist from the first start.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

func (s *Server) store(group, resource string) *registry.Store {
	return s.handler.Store(schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource})
}

// runBootstrap creates the system namespaces and keeps the kubernetes
// Service, Endpoints and EndpointSlice pointing at this server, as
// upstream's bootstrap controller and endpoint reconciler do.
func (s *Server) runBootstrap(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("bootstrap")
	defer s.leaveKubernetesEndpoints(ctx)
	reconcile := func(ctx context.Context) (bool, error) {
		if err := s.ensureSystemObjects(ctx); err != nil {
			logger.Error(err, "reconciling system objects")
			return false, nil
		}
		return true, nil
	}
	if err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, reconcile); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// Ready only once the authorizer holds the bootstrap policy too: the
	// feeds may have synced before it was written, and a component that
	// starts on readyz must not be refused for the moment in between.
	if s.rbac != nil {
		var roles, bindings []string
		for _, r := range authz.BootstrapClusterRoles() {
			roles = append(roles, r.Name)
		}
		for _, b := range authz.BootstrapClusterRoleBindings() {
			bindings = append(bindings, b.Name)
		}
		err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			return s.rbac.HasClusterObjects(roles, bindings), nil
		})
		if err != nil {
			return nil
		}
	}
	close(s.bootstrapped)
	interval := s.opts.EndpointReconcileInterval
	if interval <= 0 || interval >= MasterLeaseTTL {
		interval = 10 * time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			_, _ = reconcile(ctx)
		}
	}
}

func (s *Server) createIfMissing(ctx context.Context, st *registry.Store, ns string, obj runtime.Object) error {
	_, err := st.Create(ctx, ns, obj, false)
	if err != nil && !errors.Is(err, storage.ErrAlreadyExists) {
		return err
	}
	return nil
}

func (s *Server) ensureSystemObjects(ctx context.Context) error {
	nsStore := s.store("", "namespaces")
	for _, name := range SystemNamespaces {
		if _, err := nsStore.Get(ctx, "", name); err == nil {
			continue
		}
		if err := s.createIfMissing(ctx, nsStore, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return fmt.Errorf("namespace %s: %w", name, err)
		}
	}
	if err := s.ensureBootstrapPolicy(ctx); err != nil {
		return fmt.Errorf("bootstrap RBAC policy: %w", err)
	}
	// Upstream's built-in PriorityClasses, created when missing and
	// otherwise left alone (their value is immutable).
	pcStore := s.store("scheduling.k8s.io", "priorityclasses")
	for _, pc := range validation.SystemPriorityClasses() {
		if _, err := pcStore.Get(ctx, "", pc.Name); err == nil {
			continue
		}
		if err := s.createIfMissing(ctx, pcStore, "", pc); err != nil {
			return fmt.Errorf("priorityclass %s: %w", pc.Name, err)
		}
	}
	if s.opts.LocalPathStorageClass {
		scStore := s.store("storage.k8s.io", "storageclasses")
		sc := LocalPathStorageClass()
		if _, err := scStore.Get(ctx, "", sc.Name); err != nil {
			if err := s.createIfMissing(ctx, scStore, "", sc); err != nil {
				return fmt.Errorf("storageclass %s: %w", sc.Name, err)
			}
		}
	}
	port := int32(s.Port())
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: s.allocator.FirstIP(),
			Ports:     []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(port)}},
			Type:      corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
	svcStore := s.store("", "services")
	if _, err := svcStore.Get(ctx, "default", "kubernetes"); err != nil {
		if err := s.createIfMissing(ctx, svcStore, "default", svc); err != nil {
			return fmt.Errorf("service kubernetes: %w", err)
		}
	}
	if err := s.reconcileKubernetesEndpoints(ctx, true); err != nil {
		return err
	}
	return nil
}

// reconcileKubernetesEndpoints points the kubernetes Service's Endpoints
// and EndpointSlices at the live API servers, as upstream's lease endpoint
// reconciler: renew this server's master lease (unless it is shutting
// down), list the live ones, write their union.
func (s *Server) reconcileKubernetesEndpoints(ctx context.Context, renew bool) error {
	if renew {
		if err := s.leases.update(ctx); err != nil {
			return err
		}
	}
	live, err := s.leases.list(ctx)
	if err != nil {
		return err
	}
	subsets := endpointSubsets(live)
	want := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: subsets,
	}
	epStore := s.store("", "endpoints")
	if err := s.upsert(ctx, epStore, "default", "kubernetes", want, func(cur runtime.Object) bool {
		e := cur.(*corev1.Endpoints)
		return equality.Semantic.DeepEqual(e.Subsets, want.Subsets) && e.Labels[discoveryv1.LabelSkipMirror] == "true"
	}); err != nil {
		return fmt.Errorf("endpoints kubernetes: %w", err)
	}
	// One EndpointSlice per port the servers serve on: "kubernetes" for the
	// first (the only one when every server uses the same port).
	sliceStore := s.store("discovery.k8s.io", "endpointslices")
	names := map[string]bool{}
	for i, sub := range subsets {
		name := "kubernetes"
		if i > 0 {
			name = fmt.Sprintf("kubernetes-%d", sub.Ports[0].Port)
		}
		names[name] = true
		slice := kubernetesSlice(name, sub)
		if err := s.upsert(ctx, sliceStore, "default", name, slice, func(cur runtime.Object) bool {
			e := cur.(*discoveryv1.EndpointSlice)
			return equality.Semantic.DeepEqual(e.Endpoints, slice.Endpoints) && equality.Semantic.DeepEqual(e.Ports, slice.Ports) &&
				e.AddressType == slice.AddressType && equality.Semantic.DeepEqual(e.Labels, slice.Labels)
		}); err != nil {
			return fmt.Errorf("endpointslice %s: %w", name, err)
		}
	}
	list, err := sliceStore.List(ctx, "default", storage.ListOptions{FromStorage: true})
	if err != nil {
		return err
	}
	for _, e := range list.(*discoveryv1.EndpointSliceList).Items {
		if strings.HasPrefix(e.Name, "kubernetes-") && e.Labels[discoveryv1.LabelServiceName] == "kubernetes" &&
			e.Labels[discoveryv1.LabelManagedBy] == "" && !names[e.Name] {
			if _, _, err := sliceStore.Delete(ctx, "default", e.Name, nil, false); err != nil && !registry.IsNotFound(err) {
				return fmt.Errorf("endpointslice %s: %w", e.Name, err)
			}
		}
	}
	return nil
}

func kubernetesSlice(name string, sub corev1.EndpointSubset) *discoveryv1.EndpointSlice {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			// Upstream's EndpointsAdapter labels it with the service name only:
			// no controller manages it (the Service has no selector).
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(sub.Ports[0].Port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, a := range sub.Addresses {
		if ip, err := netip.ParseAddr(a.IP); err == nil && ip.Is6() && !ip.Is4In6() {
			slice.AddressType = discoveryv1.AddressTypeIPv6
		}
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{a.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	return slice
}

// leaveKubernetesEndpoints, on shutdown, removes this server's master lease
// and writes the endpoints without it.
func (s *Server) leaveKubernetesEndpoints(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	logger := klog.FromContext(ctx)
	if err := s.leases.remove(ctx); err != nil {
		logger.Error(err, "removing the master lease")
		return
	}
	if err := s.reconcileKubernetesEndpoints(ctx, false); err != nil {
		logger.Error(err, "removing this server from the kubernetes endpoints")
	}
}

// upsert creates want, or replaces the current object when current() says
// it is not what it should be.
func (s *Server) upsert(ctx context.Context, st *registry.Store, ns, name string, want runtime.Object, good func(runtime.Object) bool) error {
	cur, err := st.Get(ctx, ns, name)
	if errors.Is(err, storage.ErrNotFound) {
		return s.createIfMissing(ctx, st, ns, want)
	}
	if err != nil {
		return err
	}
	if good(cur) {
		return nil
	}
	_, _, err = st.Update(ctx, ns, name, func(_ context.Context, current runtime.Object, _ bool) (runtime.Object, error) {
		// want replaces the content; the object stays the same object
		// (UID, creation time) and the write is a compare-and-swap on the
		// revision it was read at.
		obj := want.DeepCopyObject()
		o, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		c, err := meta.Accessor(current)
		if err != nil {
			return nil, err
		}
		o.SetResourceVersion(c.GetResourceVersion())
		o.SetUID(c.GetUID())
		o.SetCreationTimestamp(c.GetCreationTimestamp())
		return obj, nil
	}, st.R.Strategy, false)
	return err
}

// ensureBootstrapPolicy creates the bootstrap ClusterRoles and bindings and
// puts back their rules and subjects when they drifted, unless an operator
// set rbac.authorization.kubernetes.io/autoupdate to "false".
func (s *Server) ensureBootstrapPolicy(ctx context.Context) error {
	roles := s.store("rbac.authorization.k8s.io", "clusterroles")
	for _, want := range authz.BootstrapClusterRoles() {
		err := s.upsert(ctx, roles, "", want.Name, want, func(cur runtime.Object) bool {
			c := cur.(*rbacv1.ClusterRole)
			return c.Annotations[authz.AutoUpdateAnnotation] == "false" || authz.ClusterRoleUpToDate(c, want)
		})
		if err != nil {
			return fmt.Errorf("clusterrole %s: %w", want.Name, err)
		}
	}
	bindings := s.store("rbac.authorization.k8s.io", "clusterrolebindings")
	for _, want := range authz.BootstrapClusterRoleBindings() {
		err := s.upsert(ctx, bindings, "", want.Name, want, func(cur runtime.Object) bool {
			c := cur.(*rbacv1.ClusterRoleBinding)
			return c.Annotations[authz.AutoUpdateAnnotation] == "false" ||
				(equality.Semantic.DeepEqual(c.Subjects, want.Subjects) && c.RoleRef == want.RoleRef)
		})
		if err != nil {
			return fmt.Errorf("clusterrolebinding %s: %w", want.Name, err)
		}
	}
	return nil
}
