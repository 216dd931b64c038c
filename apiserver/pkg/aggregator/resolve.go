package aggregator

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Reasons of the Available condition, as upstream's availability controller.
const (
	ReasonLocal                = "Local"
	ReasonPassed               = "Passed"
	ReasonServiceNotFound      = "ServiceNotFound"
	ReasonServicePortError     = "ServicePortError"
	ReasonMissingEndpoints     = "MissingEndpoints"
	ReasonFailedDiscoveryCheck = "FailedDiscoveryCheck"
)

// resolveError is why an APIService's Service has no endpoint to reach,
// with the Available condition's reason.
type resolveError struct {
	reason, message string
}

func (e *resolveError) Error() string { return e.message }

// resolve finds an endpoint of the APIService's Service, as upstream's
// endpoint service resolver (--enable-aggregator-routing=true): the
// Service's port numbered spec.service.port, then a ready address of its
// EndpointSlices with that port's name, picked at random.
func (a *Aggregator) resolve(api *apiregistrationv1.APIService) (*url.URL, error) {
	ref := api.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	svc, ok := a.st.service(ref.Namespace, ref.Name)
	if !ok {
		return nil, &resolveError{ReasonServiceNotFound, fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace)}
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, "":
	default:
		return nil, &resolveError{ReasonServicePortError, fmt.Sprintf("service/%s in %q has unsupported type %q", ref.Name, ref.Namespace, svc.Spec.Type)}
	}
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			svcPort = &svc.Spec.Ports[i]
		}
	}
	if svcPort == nil {
		return nil, &resolveError{ReasonServicePortError, fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)}
	}
	var hosts []string
	for _, es := range a.st.endpointSlices(ref.Namespace, ref.Name) {
		var target *int32
		for _, p := range es.Ports {
			if p.Port != nil && ptrString(p.Name) == svcPort.Name {
				target = p.Port
			}
		}
		if target == nil {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			if len(ep.Addresses) > 0 && es.AddressType != discoveryv1.AddressTypeFQDN {
				hosts = append(hosts, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*target))))
			}
		}
	}
	if len(hosts) == 0 {
		return nil, &resolveError{ReasonMissingEndpoints, fmt.Sprintf("endpoints for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, svcPort.Name)}
	}
	return &url.URL{Scheme: "https", Host: hosts[rand.IntN(len(hosts))]}, nil
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
