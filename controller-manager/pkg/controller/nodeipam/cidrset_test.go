package nodeipam

import (
	"errors"
	"net"
	"testing"
)

func mustCIDR(t *testing.T, s string) *net.IPNet {
	t.Helper()
	_, c, err := net.ParseCIDR(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCIDRSetAllocateOccupyRelease(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		mask    int
		occupy  []string
		release []string
		want    []string // successive allocations; "" means exhausted
	}{
		{name: "in order", cluster: "10.244.0.0/16", mask: 24, want: []string{"10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"}},
		{name: "occupied ones are skipped", cluster: "10.244.0.0/16", mask: 24, occupy: []string{"10.244.0.0/24", "10.244.1.0/24"},
			want: []string{"10.244.2.0/24"}},
		{name: "a larger occupied range covers several subnets", cluster: "10.0.0.0/22", mask: 24, occupy: []string{"10.0.0.0/23"},
			want: []string{"10.0.2.0/24", "10.0.3.0/24", ""}},
		{name: "exhaustion", cluster: "10.0.0.0/23", mask: 24, want: []string{"10.0.0.0/24", "10.0.1.0/24", ""}},
		{name: "outside the cluster is ignored", cluster: "10.0.0.0/24", mask: 25, occupy: []string{"192.168.0.0/24"},
			want: []string{"10.0.0.0/25", "10.0.0.128/25", ""}},
		{name: "released subnet is reused", cluster: "10.0.0.0/24", mask: 25, occupy: []string{"10.0.0.0/25", "10.0.0.128/25"},
			release: []string{"10.0.0.0/25"}, want: []string{"10.0.0.0/25", ""}},
		{name: "IPv6", cluster: "fd00:10:244::/56", mask: 64, want: []string{"fd00:10:244::/64", "fd00:10:244:1::/64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewCIDRSet(mustCIDR(t, tt.cluster), tt.mask)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.occupy {
				if err := s.Occupy(mustCIDR(t, c)); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range tt.release {
				if err := s.Release(mustCIDR(t, c)); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[string]bool{}
			for i, want := range tt.want {
				got, err := s.AllocateNext()
				if want == "" {
					if !errors.Is(err, ErrCIDRRangeNoCIDRsRemaining) {
						t.Fatalf("allocation %d: got %v, %v; want exhaustion", i, got, err)
					}
					continue
				}
				if err != nil || got.String() != want {
					t.Fatalf("allocation %d: got %v, %v; want %s", i, got, err, want)
				}
				if seen[got.String()] {
					t.Fatalf("%s handed out twice", got)
				}
				seen[got.String()] = true
			}
		})
	}
}

func TestNewCIDRSetRejectsBadMasks(t *testing.T) {
	for _, tt := range []struct {
		cluster string
		mask    int
	}{{"10.0.0.0/16", 8}, {"10.0.0.0/16", 33}, {"10.0.0.0/8", 28}} {
		if _, err := NewCIDRSet(mustCIDR(t, tt.cluster), tt.mask); err == nil {
			t.Errorf("NewCIDRSet(%s, %d) succeeded, want an error", tt.cluster, tt.mask)
		}
	}
}
