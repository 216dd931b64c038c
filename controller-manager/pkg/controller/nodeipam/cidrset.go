package nodeipam

import (
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
)

// ErrCIDRRangeNoCIDRsRemaining is returned when a cluster CIDR is full.
var ErrCIDRRangeNoCIDRsRemaining = errors.New("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range")

// maxSubnetBits bounds the number of subnets of a set (2^16), as upstream.
const maxSubnetBits = 16

// CIDRSet hands out the subnets of size subnetMaskSize of one cluster CIDR.
type CIDRSet struct {
	mu             sync.Mutex
	cluster        *net.IPNet
	clusterMask    int
	bits           int // 32 or 128
	subnetMaskSize int
	max            int
	used           []bool
	allocated      int
	next           int
}

// NewCIDRSet returns the allocator of cluster with subnets of subnetMaskSize bits.
func NewCIDRSet(cluster *net.IPNet, subnetMaskSize int) (*CIDRSet, error) {
	ones, bits := cluster.Mask.Size()
	if subnetMaskSize < ones || subnetMaskSize > bits {
		return nil, fmt.Errorf("node CIDR mask size %d must be between the cluster CIDR's mask size %d and %d", subnetMaskSize, ones, bits)
	}
	if subnetMaskSize-ones > maxSubnetBits {
		return nil, fmt.Errorf("node CIDR mask size %d is too large for cluster CIDR %s: at most %d more bits than the cluster's mask are allowed", subnetMaskSize, cluster, maxSubnetBits)
	}
	n := 1 << (subnetMaskSize - ones)
	base := &net.IPNet{IP: cluster.IP.Mask(cluster.Mask), Mask: cluster.Mask}
	return &CIDRSet{cluster: base, clusterMask: ones, bits: bits, subnetMaskSize: subnetMaskSize, max: n, used: make([]bool, n)}, nil
}

// Cluster is the set's cluster CIDR.
func (s *CIDRSet) Cluster() *net.IPNet { return s.cluster }

// Free is how many subnets are left.
func (s *CIDRSet) Free() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max - s.allocated
}

// AllocateNext hands out a free subnet.
func (s *CIDRSet) AllocateNext() (*net.IPNet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allocated == s.max {
		return nil, ErrCIDRRangeNoCIDRsRemaining
	}
	for i := range s.max {
		idx := (s.next + i) % s.max
		if !s.used[idx] {
			s.used[idx] = true
			s.allocated++
			s.next = (idx + 1) % s.max
			return s.subnet(idx), nil
		}
	}
	return nil, ErrCIDRRangeNoCIDRsRemaining
}

// Occupy marks every subnet that cidr overlaps as used. A cidr outside the
// cluster CIDR is ignored.
func (s *CIDRSet) Occupy(cidr *net.IPNet) error {
	begin, end, err := s.indexRange(cidr)
	if err != nil || begin < 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := begin; i <= end; i++ {
		if !s.used[i] {
			s.used[i] = true
			s.allocated++
		}
	}
	return nil
}

// Release frees the subnets cidr covers.
func (s *CIDRSet) Release(cidr *net.IPNet) error {
	begin, end, err := s.indexRange(cidr)
	if err != nil || begin < 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := begin; i <= end; i++ {
		if s.used[i] {
			s.used[i] = false
			s.allocated--
		}
	}
	return nil
}

func (s *CIDRSet) subnet(idx int) *net.IPNet {
	off := new(big.Int).Lsh(big.NewInt(int64(idx)), uint(s.bits-s.subnetMaskSize))
	ip := new(big.Int).Add(ipToInt(s.cluster.IP), off)
	return &net.IPNet{IP: intToIP(ip, s.bits), Mask: net.CIDRMask(s.subnetMaskSize, s.bits)}
}

// indexRange gives the first and last subnet index cidr overlaps, or -1
// when cidr is outside the cluster CIDR.
func (s *CIDRSet) indexRange(cidr *net.IPNet) (int, int, error) {
	ones, bits := cidr.Mask.Size()
	if bits != s.bits {
		return -1, -1, nil
	}
	first := cidr.IP.Mask(cidr.Mask)
	if !s.cluster.Contains(first) && !cidr.Contains(s.cluster.IP) {
		return -1, -1, nil
	}
	if ones < s.clusterMask {
		// cidr holds the whole cluster CIDR.
		return 0, s.max - 1, nil
	}
	rel := new(big.Int).Sub(ipToInt(first), ipToInt(s.cluster.IP))
	begin := int(new(big.Int).Rsh(rel, uint(s.bits-s.subnetMaskSize)).Int64())
	size := new(big.Int).Lsh(big.NewInt(1), uint(s.bits-ones))
	last := new(big.Int).Add(rel, new(big.Int).Sub(size, big.NewInt(1)))
	end := int(new(big.Int).Rsh(last, uint(s.bits-s.subnetMaskSize)).Int64())
	if begin < 0 || end >= s.max {
		return -1, -1, fmt.Errorf("CIDR %s is outside cluster CIDR %s", cidr, s.cluster)
	}
	return begin, end, nil
}

func ipToInt(ip net.IP) *big.Int {
	if v4 := ip.To4(); v4 != nil {
		return new(big.Int).SetBytes(v4)
	}
	return new(big.Int).SetBytes(ip.To16())
}

func intToIP(v *big.Int, bits int) net.IP {
	b := v.Bytes()
	out := make(net.IP, bits/8)
	copy(out[len(out)-len(b):], b)
	return out
}
