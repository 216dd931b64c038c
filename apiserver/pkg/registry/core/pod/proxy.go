package pod

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"skiff.dev/apiserver/pkg/registry/rest"
)

// Proxy serves pods/proxy: v1 PodProxyOptions, and the pod's address.
var Proxy = rest.NewProxy(
	func(path string) *corev1.PodProxyOptions {
		return &corev1.PodProxyOptions{TypeMeta: metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "PodProxyOptions"}, Path: path}
	},
	func(o *corev1.PodProxyOptions) string { return o.Path },
	func(ctx context.Context, deps rest.LocationDeps, ns, id string) (*url.URL, http.RoundTripper, error) {
		loc, err := ResourceLocation(ctx, deps.Store, ns, id)
		return loc, deps.Transport, err
	})

// ResourceLocation is upstream's pod ResourceLocation: the pod's IP, on the
// port asked for or the first container port, refused when the address is
// not a global unicast one (a pod on the host's loopback).
func ResourceLocation(ctx context.Context, pods rest.Getter, ns, id string) (*url.URL, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", id))
	}
	obj, err := pods.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	pod := obj.(*corev1.Pod)
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if ip := net.ParseIP(podIP); ip == nil || !ip.IsGlobalUnicast() {
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme, Host: podIP}
	if strings.Contains(podIP, ":") {
		loc.Host = "[" + podIP + "]"
	}
	if port != "" {
		loc.Host = net.JoinHostPort(podIP, port)
	}
	return loc, nil
}
