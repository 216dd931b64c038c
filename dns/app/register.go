package app

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
			Labels: map[string]string{
				discoveryv1.LabelServiceName: r.service,
				discoveryv1.LabelManagedBy:   ManagedBy,
				"k8s-app":                    "kube-dns",
			},
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

// Start keeps the objects in place until ctx ends, then deletes this
// instance's EndpointSlice so that the Service no longer sends queries
// here.
func (r *registrar) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx)
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

	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	name := SliceName(r.service, r.nodeName)
	err := r.client.DiscoveryV1().EndpointSlices(r.namespace).Delete(dctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting this instance's EndpointSlice %s/%s: %w", r.namespace, name, err)
	}
	logger.Info("Deleted this instance's EndpointSlice", "endpointSlice", klog.KRef(r.namespace, name))
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
