package endpoints

import (
	"bytes"
	"crypto/md5"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
)

// RepackSubsets expands subsets to one (address, port) pair each and packs
// them again into upstream's canonical layout (pkg/api/v1/endpoints'
// function of the same name): one subset per group of addresses that
// serve the same ports, an address listed once (by IP and target UID), not
// ready when it is not ready for any of its ports, addresses sorted by IP
// and UID, ports and subsets in the order of their hashes. Equal endpoints
// therefore always compare equal. Subsets without ports (a headless
// Service without ports) are kept, with no ports.
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	allAddrs := map[addressKey]*corev1.EndpointAddress{}
	portToAddrs := map[portKey]addressSet{}
	ports := map[portKey]corev1.EndpointPort{}
	// noPort stands for "no ports" so those addresses are not lost.
	noPort := portKey{port: -1}
	for i := range subsets {
		ss := &subsets[i]
		if len(ss.Ports) == 0 {
			mapAddresses(ss, noPort, allAddrs, portToAddrs)
			continue
		}
		for _, p := range ss.Ports {
			k := keyOfPort(p)
			ports[k] = p
			mapAddresses(ss, k, allAddrs, portToAddrs)
		}
	}

	// Group the ports by the exact set of addresses (and readiness) that
	// serve them.
	type group struct {
		addrs addressSet
		ports []corev1.EndpointPort
	}
	groups := map[string]*group{}
	for pk, addrs := range portToAddrs {
		k := addressSetKey(addrs)
		g, ok := groups[k]
		if !ok {
			g = &group{addrs: addrs}
			groups[k] = g
		}
		if pk != noPort {
			g.ports = append(g.ports, ports[pk])
		}
	}

	final := make([]corev1.EndpointSubset, 0, len(groups))
	for _, g := range groups {
		var ready, notReady []corev1.EndpointAddress
		for a, r := range g.addrs {
			if r {
				ready = append(ready, *a)
			} else {
				notReady = append(notReady, *a)
			}
		}
		final = append(final, corev1.EndpointSubset{Addresses: ready, NotReadyAddresses: notReady, Ports: g.ports})
	}
	return SortSubsets(final)
}

// addressKey identifies an address: the same IP of two pods (a pod on the
// host network) is two addresses.
type addressKey struct {
	ip  string
	uid types.UID
}

// portKey identifies a port by value (EndpointPort holds a pointer).
type portKey struct {
	name, protocol string
	port           int32
	appProtocol    string
	hasApp         bool
}

func keyOfPort(p corev1.EndpointPort) portKey {
	k := portKey{name: p.Name, protocol: string(p.Protocol), port: p.Port}
	if p.AppProtocol != nil {
		k.appProtocol, k.hasApp = *p.AppProtocol, true
	}
	return k
}

// addressSet maps each address to whether it is ready.
type addressSet map[*corev1.EndpointAddress]bool

func mapAddresses(ss *corev1.EndpointSubset, port portKey, allAddrs map[addressKey]*corev1.EndpointAddress, portToAddrs map[portKey]addressSet) {
	for i := range ss.Addresses {
		mapAddress(&ss.Addresses[i], port, true, allAddrs, portToAddrs)
	}
	for i := range ss.NotReadyAddresses {
		mapAddress(&ss.NotReadyAddresses[i], port, false, allAddrs, portToAddrs)
	}
}

// mapAddress records that addr serves port; not ready wins over ready.
func mapAddress(addr *corev1.EndpointAddress, port portKey, ready bool, allAddrs map[addressKey]*corev1.EndpointAddress, portToAddrs map[portKey]addressSet) {
	key := addressKey{ip: addr.IP}
	if addr.TargetRef != nil {
		key.uid = addr.TargetRef.UID
	}
	a := allAddrs[key]
	if a == nil {
		cp := *addr
		a = &cp
		allAddrs[key] = a
	}
	set := portToAddrs[port]
	if set == nil {
		set = addressSet{}
		portToAddrs[port] = set
	}
	if wasReady, found := set[a]; !found || wasReady {
		set[a] = ready
	}
}

// addressSetKey is a string that identifies the set: its addresses in
// order with their readiness.
func addressSetKey(set addressSet) string {
	type entry struct {
		addr  *corev1.EndpointAddress
		ready bool
	}
	entries := make([]entry, 0, len(set))
	for a, r := range set {
		entries = append(entries, entry{a, r})
	}
	sort.Slice(entries, func(i, j int) bool { return LessEndpointAddress(entries[i].addr, entries[j].addr) })
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(e.addr.IP)
		b.WriteByte('/')
		if e.addr.TargetRef != nil {
			b.WriteString(string(e.addr.TargetRef.UID))
		}
		if e.ready {
			b.WriteString("/r;")
		} else {
			b.WriteString("/n;")
		}
	}
	return b.String()
}

// LessEndpointAddress orders addresses by IP, then target UID.
func LessEndpointAddress(a, b *corev1.EndpointAddress) bool {
	if c := bytes.Compare([]byte(a.IP), []byte(b.IP)); c != 0 {
		return c < 0
	}
	if b.TargetRef == nil {
		return false
	}
	if a.TargetRef == nil {
		return true
	}
	return a.TargetRef.UID < b.TargetRef.UID
}

// SortSubsets sorts each subset's addresses and ports and the subsets
// themselves, in place, as upstream orders them (ports and subsets by the
// MD5 of their dump), and returns subsets.
func SortSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	for i := range subsets {
		ss := &subsets[i]
		sort.Slice(ss.Addresses, func(a, b int) bool { return LessEndpointAddress(&ss.Addresses[a], &ss.Addresses[b]) })
		sort.Slice(ss.NotReadyAddresses, func(a, b int) bool {
			return LessEndpointAddress(&ss.NotReadyAddresses[a], &ss.NotReadyAddresses[b])
		})
		sortByHash(ss.Ports)
	}
	sortByHash(subsets)
	return subsets
}

// sortByHash sorts items by the MD5 of dump.ForHash, upstream's
// DeepHashObject.
func sortByHash[T any](items []T) {
	hashes := make([][]byte, len(items))
	for i := range items {
		h := md5.Sum([]byte(dump.ForHash(items[i])))
		hashes[i] = h[:]
	}
	sort.Sort(byHash[T]{items, hashes})
}

type byHash[T any] struct {
	items  []T
	hashes [][]byte
}

func (s byHash[T]) Len() int           { return len(s.items) }
func (s byHash[T]) Less(i, j int) bool { return bytes.Compare(s.hashes[i], s.hashes[j]) < 0 }
func (s byHash[T]) Swap(i, j int) {
	s.items[i], s.items[j] = s.items[j], s.items[i]
	s.hashes[i], s.hashes[j] = s.hashes[j], s.hashes[i]
}
