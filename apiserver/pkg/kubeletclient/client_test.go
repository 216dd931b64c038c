package kubeletclient

import (
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(port int32, labels map[string]string, addrs ...corev1.NodeAddress) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}}
	n.Status.Addresses = addrs
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	return n
}

func addr(t corev1.NodeAddressType, a string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: t, Address: a}
}

func TestNodeAddress(t *testing.T) {
	defaults := []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeHostName, corev1.NodeExternalIP}
	for _, tc := range []struct {
		name    string
		node    *corev1.Node
		types   []corev1.NodeAddressType
		want    string
		wantErr bool
	}{
		{name: "internal IP first", node: node(0, nil, addr(corev1.NodeHostName, "host"), addr(corev1.NodeInternalIP, "10.0.0.1")), types: defaults, want: "10.0.0.1"},
		{name: "first of a type", node: node(0, nil, addr(corev1.NodeInternalIP, "10.0.0.1"), addr(corev1.NodeInternalIP, "10.0.0.2")), types: defaults, want: "10.0.0.1"},
		{name: "hostname next", node: node(0, nil, addr(corev1.NodeExternalIP, "1.2.3.4"), addr(corev1.NodeHostName, "host")), types: defaults, want: "host"},
		{name: "hostname label", node: node(0, map[string]string{"kubernetes.io/hostname": "labelled"}, addr(corev1.NodeExternalIP, "1.2.3.4")), types: defaults, want: "labelled"},
		{name: "external last", node: node(0, nil, addr(corev1.NodeExternalIP, "1.2.3.4")), types: defaults, want: "1.2.3.4"},
		{name: "order of the flag", node: node(0, nil, addr(corev1.NodeInternalIP, "10.0.0.1"), addr(corev1.NodeExternalIP, "1.2.3.4")),
			types: []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeInternalIP}, want: "1.2.3.4"},
		{name: "none", node: node(0, nil, addr(corev1.NodeInternalDNS, "n.local")), types: defaults, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NodeAddress(tc.node, tc.types)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("NodeAddress = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestLocation(t *testing.T) {
	c, err := New(Config{AddressTypes: DefaultAddressTypes})
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"follow": {"true"}, "tailLines": {"5"}}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want string
	}{
		{name: "advertised port", node: node(12345, nil, addr(corev1.NodeInternalIP, "10.0.0.1")),
			want: "https://10.0.0.1:12345/containerLogs/ns/p/c?follow=true&tailLines=5"},
		{name: "default port", node: node(0, nil, addr(corev1.NodeInternalIP, "10.0.0.1")),
			want: "https://10.0.0.1:10250/containerLogs/ns/p/c?follow=true&tailLines=5"},
		{name: "IPv6", node: node(0, nil, addr(corev1.NodeInternalIP, "fd00::1")),
			want: "https://[fd00::1]:10250/containerLogs/ns/p/c?follow=true&tailLines=5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := c.Location(tc.node, "/containerLogs/ns/p/c", q)
			if err != nil {
				t.Fatal(err)
			}
			if u.String() != tc.want {
				t.Errorf("Location = %s, want %s", u, tc.want)
			}
		})
	}
	if _, err := c.Location(node(0, nil), "/x", nil); err == nil {
		t.Error("a node without addresses: want an error")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{name: "no address types", cfg: Config{}},
		{name: "unknown address type", cfg: Config{AddressTypes: []string{"InternalIP", "Bogus"}}},
		{name: "cert without key", cfg: Config{AddressTypes: DefaultAddressTypes, CertFile: "x.crt"}},
		{name: "missing cert file", cfg: Config{AddressTypes: DefaultAddressTypes, CertFile: "/nonexistent.crt", KeyFile: "/nonexistent.key"}},
		{name: "missing CA file", cfg: Config{AddressTypes: DefaultAddressTypes, CAFile: "/nonexistent.crt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil {
				t.Error("want an error")
			}
		})
	}
}
