package iptables

import (
	"strings"

	"skiff.dev/proxy/pkg/servicemap"
)

// The tables the proxy writes.
const (
	TableNAT    = "nat"
	TableFilter = "filter"
)

// The chains the proxy owns. Each per-Service chain is a prefix followed
// by servicemap.Hash of the port (and, for SKIFF-SEP-, the endpoint).
const (
	ChainServices         = "SKIFF-SERVICES"
	ChainExternalServices = "SKIFF-EXTERNAL-SERVICES"
	ChainNodePorts        = "SKIFF-NODEPORTS"
	ChainPostrouting      = "SKIFF-POSTROUTING"
	ChainMarkMasq         = "SKIFF-MARK-MASQ"
	ChainForward          = "SKIFF-FORWARD"
	ChainProxyFirewall    = "SKIFF-PROXY-FIREWALL"
	ChainFirewall         = "SKIFF-FIREWALL"

	PrefixSVC = "SKIFF-SVC-"
	PrefixSVL = "SKIFF-SVL-"
	PrefixEXT = "SKIFF-EXT-"
	PrefixFW  = "SKIFF-FW-"
	PrefixSEP = "SKIFF-SEP-"

	// Prefix starts every chain the proxy (and netsafety) creates.
	Prefix = "SKIFF-"
)

// natTopChains and filterTopChains are rewritten in full by every sync.
var (
	natTopChains    = []string{ChainServices, ChainNodePorts, ChainPostrouting, ChainMarkMasq}
	filterTopChains = []string{ChainServices, ChainExternalServices, ChainForward, ChainNodePorts, ChainProxyFirewall, ChainFirewall}
)

// portChains are the names of one ServicePort's chains.
type portChains struct {
	svc, svl, ext, fw string
}

func chainsOf(p *servicemap.ServicePort) portChains {
	h := servicemap.Hash(p.Name.String(), p.Protocol, "")
	return portChains{svc: PrefixSVC + h, svl: PrefixSVL + h, ext: PrefixEXT + h, fw: PrefixFW + h}
}

func endpointChain(p *servicemap.ServicePort, e *servicemap.Endpoint) string {
	return PrefixSEP + servicemap.Hash(p.Name.String(), p.Protocol, e.String())
}

// isServiceChain reports whether a nat chain belongs to one Service port
// (and is deleted when no Service wants it any more).
func isServiceChain(name string) bool {
	for _, p := range []string{PrefixSVC, PrefixSVL, PrefixEXT, PrefixFW, PrefixSEP} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// hashFor is servicemap.Hash (for tests that name chains).
var hashFor = servicemap.Hash
