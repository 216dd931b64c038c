package app

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// EndpointSlices skiff-dns writes; the endpointslice controller leaves
// them alone.
const ManagedBy = "skiff-dns"

// Port names of the kube-dns Service, as upstream's CoreDNS manifests.
const (
	PortDNS     = "dns"
	PortDNSTCP  = "dns-tcp"
	PortMetrics = "metrics"
)

// registrar keeps the DNS Service and this instance's EndpointSlice in
// the API.
type registrar struct {
	client    kubernetes.Interface
	namespace string
	service   string
	clusterIP string
	nodeName  string
	nodeIP    string
	dnsPort   int32
	metrics   int32
	// period is how often the objects are checked again (they may have
	// been deleted or changed by hand).
	period time.Duration
	// This instance's Lease is renewed every renewInterval and declares
	// leaseDuration; every renewInterval the instance also deletes the
	// slices of instances whose Lease it has seen unchanged (or missing)
	// for longer than their duration.
	leaseDuration time.Duration
	renewInterval time.Duration
	// observed is, per other instance's slice, its Lease's version when
	// last seen changed and the time that was; only the lease loop uses it.
	observed map[string]observation
}

type observation struct {
	version string // the Lease's resourceVersion, "" while missing
	since   time.Time
}

// ServiceLabels are upstream's labels of the kube-dns Service.
func ServiceLabels() map[string]string {
	return map[string]string{
		"k8s-app":                       "kube-dns",
		"kubernetes.io/name":            "CoreDNS",
		"kubernetes.io/cluster-service": "true",
	}
}

// SliceName is the name of the EndpointSlice of the instance on node.
func SliceName(service, node string) string { return service + "-" + node }

// LeaseName is the name of the Lease (in the Service's namespace) that
// the instance on node renews while it runs.
func LeaseName(node string) string { return "skiff-dns-" + node }

// leaseLabels select the instances' Leases (one List a round, whatever
// the number of instances).
func leaseLabels() map[string]string { return map[string]string{"k8s-app": "kube-dns"} }

// sliceLabels select the EndpointSlices of service that skiff-dns keeps.
func sliceLabels(service string) map[string]string {
	return map[string]string{
		discoveryv1.LabelServiceName: service,
		discoveryv1.LabelManagedBy:   ManagedBy,
		"k8s-app":                    "kube-dns",
	}
}

func (r *registrar) wantService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: r.service, Namespace: r.namespace, Labels: ServiceLabels(),
			Annotations: map[string]string{"prometheus.io/port": "9153", "prometheus.io/scrape": "true"},
		},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  r.clusterIP,
			ClusterIPs: []string{r.clusterIP},
			Ports: []corev1.ServicePort{
				{Name: PortDNS, Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(r.dnsPort)},
				{Name: PortDNSTCP, Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(r.dnsPort)},
				{Name: PortMetrics, Protocol: corev1.ProtocolTCP, Port: 9153, TargetPort: intstr.FromInt32(r.metrics)},
			},
		},
	}
}

func (r *registrar) wantSlice(svc *corev1.Service) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: SliceName(r.service, r.nodeName), Namespace: r.namespace,
			Labels: sliceLabels(r.service),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
			}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{r.nodeIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(r.nodeName),
		}},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To(PortDNS), Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(r.dnsPort)},
			{Name: ptr.To(PortDNSTCP), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(r.dnsPort)},
			{Name: ptr.To(PortMetrics), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(r.metrics)},
		},
	}
}

// ensure creates the Service when it is missing (one that exists is
// left as it is, but for its labels and ports) and creates or corrects
// this instance's EndpointSlice.
func (r *registrar) ensure(ctx context.Context) error {
	services := r.client.CoreV1().Services(r.namespace)
	want := r.wantService()
	svc, err := services.Get(ctx, r.service, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		svc, err = services.Create(ctx, want, metav1.CreateOptions{FieldManager: ManagedBy})
		if apierrors.IsAlreadyExists(err) {
			// Another instance was first.
			svc, err = services.Get(ctx, r.service, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("creating Service %s/%s: %w", r.namespace, r.service, err)
		}
		klog.FromContext(ctx).Info("Created the DNS Service", "service", klog.KObj(svc), "clusterIP", svc.Spec.ClusterIP)
	case err != nil:
		return fmt.Errorf("reading Service %s/%s: %w", r.namespace, r.service, err)
	default:
		if !labelsInclude(svc.Labels, want.Labels) || !reflect.DeepEqual(portsOf(svc), portsOf(want)) {
			upd := svc.DeepCopy()
			if upd.Labels == nil {
				upd.Labels = map[string]string{}
			}
			for k, v := range want.Labels {
				upd.Labels[k] = v
			}
			upd.Spec.Ports = want.Spec.Ports
			if svc, err = services.Update(ctx, upd, metav1.UpdateOptions{FieldManager: ManagedBy}); err != nil {
				return fmt.Errorf("updating Service %s/%s: %w", r.namespace, r.service, err)
			}
		}
	}
	if svc.Spec.ClusterIP != r.clusterIP {
		klog.FromContext(ctx).Info("The DNS Service has another cluster IP than --cluster-ip; kubelets must point at the Service's",
			"service", klog.KObj(svc), "clusterIP", svc.Spec.ClusterIP, "want", r.clusterIP)
	}

	slices := r.client.DiscoveryV1().EndpointSlices(r.namespace)
	wantSlice := r.wantSlice(svc)
	cur, err := slices.Get(ctx, wantSlice.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := slices.Create(ctx, wantSlice, metav1.CreateOptions{FieldManager: ManagedBy}); err != nil {
			return fmt.Errorf("creating EndpointSlice %s/%s: %w", r.namespace, wantSlice.Name, err)
		}
		klog.FromContext(ctx).Info("Created this instance's EndpointSlice", "endpointSlice", klog.KObj(wantSlice), "address", r.nodeIP)
	case err != nil:
		return fmt.Errorf("reading EndpointSlice %s/%s: %w", r.namespace, wantSlice.Name, err)
	default:
		if reflect.DeepEqual(cur.Endpoints, wantSlice.Endpoints) && reflect.DeepEqual(cur.Ports, wantSlice.Ports) &&
			labelsInclude(cur.Labels, wantSlice.Labels) && reflect.DeepEqual(cur.OwnerReferences, wantSlice.OwnerReferences) {
			return nil
		}
		upd := cur.DeepCopy()
		upd.Labels, upd.OwnerReferences = wantSlice.Labels, wantSlice.OwnerReferences
		upd.AddressType, upd.Endpoints, upd.Ports = wantSlice.AddressType, wantSlice.Endpoints, wantSlice.Ports
		if _, err := slices.Update(ctx, upd, metav1.UpdateOptions{FieldManager: ManagedBy}); err != nil {
			return fmt.Errorf("updating EndpointSlice %s/%s: %w", r.namespace, wantSlice.Name, err)
		}
	}
	return nil
}

// renewLease creates or renews this instance's Lease.
func (r *registrar) renewLease(ctx context.Context) error {
	leases := r.client.CoordinationV1().Leases(r.namespace)
	name := LeaseName(r.nodeName)
	now := metav1.NewMicroTime(time.Now())
	seconds := int32((r.leaseDuration + time.Second - 1) / time.Second)
	cur, err := leases.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.namespace, Labels: leaseLabels()},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(r.nodeName), LeaseDurationSeconds: ptr.To(seconds),
				AcquireTime: &now, RenewTime: &now,
			},
		}, metav1.CreateOptions{FieldManager: ManagedBy})
		if err != nil {
			return fmt.Errorf("creating Lease %s/%s: %w", r.namespace, name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading Lease %s/%s: %w", r.namespace, name, err)
	}
	upd := cur.DeepCopy()
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	for k, v := range leaseLabels() {
		upd.Labels[k] = v
	}
	upd.Spec.HolderIdentity, upd.Spec.LeaseDurationSeconds, upd.Spec.RenewTime = ptr.To(r.nodeName), ptr.To(seconds), &now
	if upd.Spec.AcquireTime == nil {
		upd.Spec.AcquireTime = &now
	}
	if _, err := leases.Update(ctx, upd, metav1.UpdateOptions{FieldManager: ManagedBy}); err != nil {
		return fmt.Errorf("renewing Lease %s/%s: %w", r.namespace, name, err)
	}
	return nil
}

// removeDead deletes the EndpointSlices of the other instances whose
// Lease this instance has seen unchanged, or missing, for longer than
// the Lease's duration: an instance that crashed, or whose node is gone,
// no longer gets queries. Expiry is measured on this instance's clock
// from when it saw the Lease change, as the node lifecycle controller
// does with node Leases, so clocks that differ between nodes do not
// matter.
func (r *registrar) removeDead(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	slices := r.client.DiscoveryV1().EndpointSlices(r.namespace)
	leases := r.client.CoordinationV1().Leases(r.namespace)
	list, err := slices.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sliceLabels(r.service)).String()})
	if err != nil {
		return fmt.Errorf("listing the EndpointSlices of %s/%s: %w", r.namespace, r.service, err)
	}
	leaseList, err := leases.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(leaseLabels()).String()})
	if err != nil {
		return fmt.Errorf("listing the Leases of skiff-dns in %s: %w", r.namespace, err)
	}
	byName := map[string]*coordinationv1.Lease{}
	for i := range leaseList.Items {
		byName[leaseList.Items[i].Name] = &leaseList.Items[i]
	}
	if r.observed == nil {
		r.observed = map[string]observation{}
	}
	own := SliceName(r.service, r.nodeName)
	seen := map[string]bool{}
	var errs []error
	for i := range list.Items {
		slice := &list.Items[i]
		node, ok := strings.CutPrefix(slice.Name, r.service+"-")
		if slice.Name == own || !ok || node == "" {
			continue
		}
		seen[slice.Name] = true
		lease := byName[LeaseName(node)]
		version, duration := "", r.leaseDuration
		if lease != nil {
			version = lease.ResourceVersion
			if d := lease.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
				duration = time.Duration(*d) * time.Second
			}
		}
		now := time.Now()
		obs, known := r.observed[slice.Name]
		if !known || obs.version != version {
			r.observed[slice.Name] = observation{version: version, since: now}
			continue
		}
		if now.Sub(obs.since) <= duration {
			continue
		}
		err = slices.Delete(ctx, slice.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &slice.UID, ResourceVersion: &slice.ResourceVersion}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting EndpointSlice %s/%s: %w", r.namespace, slice.Name, err))
			continue
		}
		delete(r.observed, slice.Name)
		if err == nil {
			logger.Info("Deleted the EndpointSlice of an instance whose Lease expired", "endpointSlice", klog.KObj(slice),
				"lease", klog.KRef(r.namespace, LeaseName(node)), "leaseMissing", lease == nil, "unchangedFor", now.Sub(obs.since).Round(time.Millisecond))
		}
		if lease != nil {
			err := leases.Delete(ctx, lease.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				errs = append(errs, fmt.Errorf("deleting Lease %s/%s: %w", r.namespace, lease.Name, err))
			}
		}
	}
	for name := range r.observed {
		if !seen[name] {
			delete(r.observed, name)
		}
	}
	return errors.Join(errs...)
}

// Start keeps the objects in place until ctx ends, then deletes this
// instance's EndpointSlice and Lease so that the Service no longer sends
// queries here.
func (r *registrar) Start(ctx context.Context) error {
	r.run(ctx)
	return r.cleanup(ctx)
}

// run keeps the Service, this instance's EndpointSlice and Lease, and
// removes the slices of dead instances, until ctx ends.
func (r *registrar) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			// Errors are retried with back-off inside one round, and the
			// round repeats every period.
			backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 8, Cap: r.period}
			_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
				if err := r.ensure(ctx); err != nil {
					logger.Error(err, "Keeping the DNS Service and endpoints")
					return false, nil
				}
				return true, nil
			})
		}, r.period)
	}()
	go func() {
		defer wg.Done()
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			if err := r.renewLease(ctx); err != nil {
				logger.Error(err, "Renewing this instance's Lease")
			}
			if err := r.removeDead(ctx); err != nil {
				logger.Error(err, "Removing the endpoints of instances whose Lease expired")
			}
		}, r.renewInterval)
	}()
	wg.Wait()
}

// cleanup deletes this instance's EndpointSlice and Lease.
func (r *registrar) cleanup(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	name := SliceName(r.service, r.nodeName)
	err := r.client.DiscoveryV1().EndpointSlices(r.namespace).Delete(dctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting this instance's EndpointSlice %s/%s: %w", r.namespace, name, err)
	}
	logger.Info("Deleted this instance's EndpointSlice", "endpointSlice", klog.KRef(r.namespace, name))
	lease := LeaseName(r.nodeName)
	err = r.client.CoordinationV1().Leases(r.namespace).Delete(dctx, lease, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting this instance's Lease %s/%s: %w", r.namespace, lease, err)
	}
	return nil
}

func labelsInclude(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

type portKey struct {
	name   string
	proto  corev1.Protocol
	port   int32
	target intstr.IntOrString
}

func portsOf(s *corev1.Service) []portKey {
	var out []portKey
	for _, p := range s.Spec.Ports {
		out = append(out, portKey{p.Name, p.Protocol, p.Port, p.TargetPort})
	}
	return out
}
