package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"skiff.dev/apiserver/pkg/registry/rest"
)

// Proxy serves nodes/proxy: v1 NodeProxyOptions, and the node's kubelet
// or another port of the node.
var Proxy = rest.NewProxy(
	func(path string) *corev1.NodeProxyOptions {
		return &corev1.NodeProxyOptions{TypeMeta: metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "NodeProxyOptions"}, Path: path}
	},
	func(o *corev1.NodeProxyOptions) string { return o.Path },
	ResourceLocation)

// ResourceLocation is upstream's node ResourceLocation: the kubelet (its
// port, HTTPS, the API server's kubelet client certificate) unless another
// port is asked for, which is reached with the proxy transport. Nodes
// whose address is loopback or link-local are refused.
func ResourceLocation(ctx context.Context, deps rest.LocationDeps, _, id string) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", id))
	}
	kc, err := deps.Kubelet()
	if err != nil {
		return nil, nil, err
	}
	obj, err := deps.Store.Get(ctx, "", name)
	if err != nil {
		return nil, nil, err
	}
	kubelet, err := kc.Location(obj.(*corev1.Node), "", nil)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	host, kubeletPort, _ := net.SplitHostPort(kubelet.Host)
	if err := proxyableHost(ctx, host); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if port == "" || port == kubeletPort {
		return kubelet, kc.Transport(false), nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}, deps.Transport, nil
}

// proxyableHost is upstream's IsProxyableHostname: no loopback or
// link-local address, for a name every address it resolves to.
func proxyableHost(ctx context.Context, host string) error {
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return err
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
			return fmt.Errorf("address not allowed")
		}
	}
	return nil
}
