package conntrack

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Flow selects the UDP entries to delete: those to OrigDst (or, with
// OrigDstPort, to any address on that port, for NodePorts), answered by
// ReplySrc when it is set.
type Flow struct {
	OrigDst     net.IP
	OrigDstPort uint16
	ReplySrc    net.IP
}

func (f Flow) String() string {
	s := "udp"
	if f.OrigDst != nil {
		s += " to " + f.OrigDst.String()
	}
	if f.OrigDstPort != 0 {
		s += fmt.Sprintf(" port %d", f.OrigDstPort)
	}
	if f.ReplySrc != nil {
		s += " DNATed to " + f.ReplySrc.String()
	}
	return s
}

// Delete removes the UDP entries matching any flow and returns how many.
func Delete(flows []Flow) (uint, error) {
	if len(flows) == 0 {
		return 0, nil
	}
	filters := make(anyOf, 0, len(flows))
	for _, fl := range flows {
		f := &netlink.ConntrackFilter{}
		if err := f.AddProtocol(unix.IPPROTO_UDP); err != nil {
			return 0, err
		}
		if fl.OrigDst != nil {
			if err := f.AddIP(netlink.ConntrackOrigDstIP, fl.OrigDst); err != nil {
				return 0, err
			}
		}
		if fl.OrigDstPort != 0 {
			if err := f.AddPort(netlink.ConntrackOrigDstPort, fl.OrigDstPort); err != nil {
				return 0, err
			}
		}
		if fl.ReplySrc != nil {
			if err := f.AddIP(netlink.ConntrackReplySrcIP, fl.ReplySrc); err != nil {
				return 0, err
			}
		}
		filters = append(filters, f)
	}
	n, err := netlink.ConntrackDeleteFilter(netlink.ConntrackTable, unix.AF_INET, filters)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return n, fmt.Errorf("deleting conntrack entries: %w", err)
	}
	return n, nil
}

// anyOf matches a flow that any of its filters matches, so that one dump
// of the table serves every flow.
type anyOf []*netlink.ConntrackFilter

func (a anyOf) MatchConntrackFlow(flow *netlink.ConntrackFlow) bool {
	for _, f := range a {
		if f.MatchConntrackFlow(flow) {
			return true
		}
	}
	return false
}
