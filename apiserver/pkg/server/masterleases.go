package server

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MasterLeasePrefix holds one key per live API server, as upstream's lease
// endpoint reconciler: /registry/masterleases/<advertise address>, an
// Endpoints object with an etcd lease of MasterLeaseTTL that the server
// renews on every reconcile. The kubernetes Service's endpoints are the
// union of the live keys.
const MasterLeasePrefix = "/registry/masterleases/"

// MasterLeaseTTL is upstream's: a server that stops renewing drops out of
// the endpoints at most this long after.
const MasterLeaseTTL = 15 * time.Second

// apiServerEndpoint is one live API server: its advertised address and port.
type apiServerEndpoint struct {
	IP   string
	Port int32
}

// masterLeases renews this server's key and lists everyone's.
type masterLeases struct {
	client *clientv3.Client
	codec  runtime.Codec
	self   apiServerEndpoint
	ttl    time.Duration
	lease  clientv3.LeaseID
}

func (m *masterLeases) key() string { return MasterLeasePrefix + m.self.IP }

// update writes this server's key, under a lease renewed (or granted anew
// when it expired) on each call.
func (m *masterLeases) update(ctx context.Context) error {
	if m.lease != 0 {
		_, err := m.client.KeepAliveOnce(ctx, m.lease)
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			m.lease = 0
		} else if err != nil {
			return fmt.Errorf("renewing the master lease: %w", err)
		}
	}
	if m.lease == 0 {
		resp, err := m.client.Grant(ctx, int64(m.ttl/time.Second))
		if err != nil {
			return fmt.Errorf("granting the master lease: %w", err)
		}
		m.lease = resp.ID
	}
	ep := &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: m.self.IP},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: m.self.IP}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: m.self.Port, Protocol: corev1.ProtocolTCP}},
		}},
	}
	data, err := runtime.Encode(m.codec, ep)
	if err != nil {
		return err
	}
	// Written only when it changed, under the current lease either way.
	cur, err := m.client.Get(ctx, m.key())
	if err != nil {
		return err
	}
	if len(cur.Kvs) == 1 && string(cur.Kvs[0].Value) == string(data) && clientv3.LeaseID(cur.Kvs[0].Lease) == m.lease {
		return nil
	}
	_, err = m.client.Put(ctx, m.key(), string(data), clientv3.WithLease(m.lease))
	return err
}

// remove deletes this server's key (on shutdown), so that the endpoints
// drop it at once rather than when the lease expires.
func (m *masterLeases) remove(ctx context.Context) error {
	if m.lease != 0 {
		_, err := m.client.Revoke(ctx, m.lease)
		m.lease = 0
		if err == nil || errors.Is(err, rpctypes.ErrLeaseNotFound) {
			_, err = m.client.Delete(ctx, m.key())
		}
		return err
	}
	_, err := m.client.Delete(ctx, m.key())
	return err
}

// list returns the live servers, sorted by address.
func (m *masterLeases) list(ctx context.Context) ([]apiServerEndpoint, error) {
	resp, err := m.client.Get(ctx, MasterLeasePrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing the master leases: %w", err)
	}
	var out []apiServerEndpoint
	for _, kv := range resp.Kvs {
		ip := strings.TrimPrefix(string(kv.Key), MasterLeasePrefix)
		port := m.self.Port
		obj, err := runtime.Decode(m.codec, kv.Value)
		if ep, ok := obj.(*corev1.Endpoints); err == nil && ok && len(ep.Subsets) > 0 {
			if len(ep.Subsets[0].Addresses) > 0 {
				ip = ep.Subsets[0].Addresses[0].IP
			}
			if len(ep.Subsets[0].Ports) > 0 {
				port = ep.Subsets[0].Ports[0].Port
			}
		}
		if _, err := netip.ParseAddr(ip); err != nil {
			continue
		}
		out = append(out, apiServerEndpoint{IP: ip, Port: port})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].IP != out[j].IP {
			return out[i].IP < out[j].IP
		}
		return out[i].Port < out[j].Port
	})
	return out, nil
}

// endpointSubsets groups the servers by port (one subset each, ports in
// increasing order), as the Endpoints object of the kubernetes Service has
// them: one subset when, as usual, every server serves on the same port.
func endpointSubsets(eps []apiServerEndpoint) []corev1.EndpointSubset {
	byPort := map[int32][]string{}
	var ports []int32
	for _, e := range eps {
		if _, ok := byPort[e.Port]; !ok {
			ports = append(ports, e.Port)
		}
		byPort[e.Port] = append(byPort[e.Port], e.IP)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	out := make([]corev1.EndpointSubset, 0, len(ports))
	for _, p := range ports {
		ips := byPort[p]
		sort.Strings(ips)
		sub := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: "https", Port: p, Protocol: corev1.ProtocolTCP}}}
		for _, ip := range ips {
			sub.Addresses = append(sub.Addresses, corev1.EndpointAddress{IP: ip})
		}
		out = append(out, sub)
	}
	return out
}
