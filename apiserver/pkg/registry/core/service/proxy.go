package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"skiff.dev/apiserver/pkg/registry/rest"
)

// Proxy serves services/proxy: v1 ServiceProxyOptions, and a ready
// endpoint of the service.
var Proxy = rest.NewProxy(
	func(path string) *corev1.ServiceProxyOptions {
		return &corev1.ServiceProxyOptions{TypeMeta: metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "ServiceProxyOptions"}, Path: path}
	},
	func(o *corev1.ServiceProxyOptions) string { return o.Path },
	func(ctx context.Context, deps rest.LocationDeps, ns, id string) (*url.URL, http.RoundTripper, error) {
		loc, err := ResourceLocation(ctx, deps.Store, deps.CoreStore("endpoints"), deps.CoreStore("pods"), ns, id)
		return loc, deps.Transport, err
	})

// ResourceLocation is upstream's service ResourceLocation: a random
// address of the service's Endpoints that serves the port asked for (by
// name, or by number through the service's port of that number), whose
// pod still has that IP.
func ResourceLocation(ctx context.Context, services, endpoints, pods rest.Getter, ns, id string) (*url.URL, error) {
	scheme, name, portStr, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if services == nil || endpoints == nil || pods == nil {
		return nil, apierrors.NewServiceUnavailable("no service storage")
	}
	if portNum, err := strconv.ParseInt(portStr, 10, 64); err == nil {
		obj, err := services.Get(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		found := false
		for _, p := range obj.(*corev1.Service).Spec.Ports {
			if int64(p.Port) == portNum {
				portStr, found = p.Name, true
				break
			}
		}
		if !found {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", portNum, name))
		}
	}
	obj, err := endpoints.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	eps := obj.(*corev1.Endpoints)
	if len(eps.Subsets) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	ssSeed := rand.IntN(len(eps.Subsets))
	for ssi := range eps.Subsets {
		ss := &eps.Subsets[(ssSeed+ssi)%len(eps.Subsets)]
		if len(ss.Addresses) == 0 {
			continue
		}
		for _, p := range ss.Ports {
			if p.Name != portStr {
				continue
			}
			addrSeed := rand.IntN(len(ss.Addresses))
			for try := range ss.Addresses {
				addr := ss.Addresses[(addrSeed+try)%len(ss.Addresses)]
				if !validEndpointAddress(ctx, pods, &addr) {
					continue
				}
				return &url.URL{Scheme: scheme, Host: net.JoinHostPort(addr.IP, strconv.Itoa(int(p.Port)))}, nil
			}
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", id))
}

// validEndpointAddress: the address names a pod that still has its IP.
func validEndpointAddress(ctx context.Context, pods rest.Getter, addr *corev1.EndpointAddress) bool {
	if addr.TargetRef == nil || addr.TargetRef.Kind != "Pod" {
		return false
	}
	obj, err := pods.Get(ctx, addr.TargetRef.Namespace, addr.TargetRef.Name)
	if err != nil {
		return false
	}
	pod := obj.(*corev1.Pod)
	for _, ip := range pod.Status.PodIPs {
		if ip.IP == addr.IP {
			return true
		}
	}
	return pod.Status.PodIP == addr.IP
}
