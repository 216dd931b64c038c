package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/containernetworking/cni/libcni"
	cnitypes "github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/kubelet/pkg/pod"
)

// ConfFileName is the conflist the kubelet writes into the conf dir.
const ConfFileName = "10-skiff.conflist"

// netnsPrefix names the kubelet's namespaces: <prefix><pod uid>.
const netnsPrefix = "skiff-"

// ErrNotReady is returned while the node has no pod CIDR yet.
var ErrNotReady = errors.New("network not ready: no pod CIDR yet")

// Options configure a Network.
type Options struct {
	// BinDirs hold the plugins (/usr/lib/cni).
	BinDirs []string
	// ConfDir receives the generated conflist.
	ConfDir string
	// CacheDir is libcni's result cache.
	CacheDir string
	// NetNSDir holds the pods' namespaces (/var/run/netns).
	NetNSDir string
	// IPAMDir is host-local's data directory (its leases).
	IPAMDir string
	// BridgeName is the node's bridge (at most 15 characters).
	BridgeName string
	// NetworkName names the network in the conflist and IPAM dir.
	NetworkName string
}

// Network implements pod.Network with the CNI reference plugins: bridge
// with host-local IPAM on the node's pod CIDR, then portmap; loopback
// separately.
type Network struct {
	opts Options
	cni  *libcni.CNIConfig

	mu   sync.Mutex
	cidr string
	list *libcni.NetworkConfigList
}

var _ pod.Network = (*Network)(nil)

// New checks the options and makes the directories.
func New(o Options) (*Network, error) {
	if o.BridgeName == "" || len(o.BridgeName) > 15 {
		return nil, fmt.Errorf("bridge name %q must have 1 to 15 characters", o.BridgeName)
	}
	if o.NetworkName == "" {
		o.NetworkName = "skiff"
	}
	if len(o.BinDirs) == 0 {
		return nil, errors.New("no CNI plugin directory")
	}
	for _, d := range []string{o.ConfDir, o.CacheDir, o.NetNSDir, o.IPAMDir} {
		if d == "" {
			return nil, errors.New("CNI conf, cache, netns and IPAM directories must be set")
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return &Network{opts: o, cni: libcni.NewCNIConfigWithCacheDir(o.BinDirs, o.CacheDir, nil)}, nil
}

// ConfList is the network configuration for a pod CIDR. ipMasq is off:
// pod traffic is not masqueraded out of the node.
func (n *Network) ConfList(cidr string) ([]byte, error) {
	if _, _, err := net.ParseCIDR(cidr); err != nil {
		return nil, fmt.Errorf("invalid pod CIDR %q: %w", cidr, err)
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       n.opts.NetworkName,
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      n.opts.BridgeName,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": cidr}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": n.opts.IPAMDir,
				},
			},
			map[string]any{
				"type":         "portmap",
				"capabilities": map[string]bool{"portMappings": true},
			},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// SetPodCIDR writes and loads the configuration for the node's pod CIDR.
func (n *Network) SetPodCIDR(cidr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cidr == n.cidr && n.list != nil {
		return nil
	}
	data, err := n.ConfList(cidr)
	if err != nil {
		return err
	}
	list, err := libcni.ConfListFromBytes(data)
	if err != nil {
		return err
	}
	path := filepath.Join(n.opts.ConfDir, ConfFileName)
	if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	n.cidr, n.list = cidr, list
	return nil
}

// PodCIDR is the CIDR the network was configured with.
func (n *Network) PodCIDR() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cidr
}

// confList is the loaded configuration, or the one on disk from an earlier
// run (so pods can be torn down before the pod CIDR is known again).
func (n *Network) confList() (*libcni.NetworkConfigList, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.list != nil {
		return n.list, nil
	}
	list, err := libcni.ConfListFromFile(filepath.Join(n.opts.ConfDir, ConfFileName))
	if err != nil {
		return nil, ErrNotReady
	}
	return list, nil
}

// Status says whether pods can be networked: the configuration is loaded
// and every plugin it names is installed and speaks its version.
func (n *Network) Status(ctx context.Context) error {
	n.mu.Lock()
	list := n.list
	n.mu.Unlock()
	if list == nil {
		return ErrNotReady
	}
	if _, err := n.cni.ValidateNetworkList(ctx, list); err != nil {
		return fmt.Errorf("network plugins: %w", err)
	}
	if _, err := n.cni.ValidateNetwork(ctx, loopback()); err != nil {
		return fmt.Errorf("loopback plugin: %w", err)
	}
	return nil
}

func loopback() *libcni.NetworkConfig {
	c, _ := libcni.ConfFromBytes([]byte(`{"cniVersion":"1.0.0","name":"cni-loopback","type":"loopback"}`))
	return c
}

// NetNSPath is where a pod's namespace is pinned.
func (n *Network) NetNSPath(uid types.UID) string {
	return filepath.Join(n.opts.NetNSDir, netnsPrefix+string(uid))
}

func (n *Network) runtimeConf(pn pod.PodNetwork, netns string) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{
		ContainerID: string(pn.UID),
		NetNS:       netns,
		IfName:      "eth0",
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", pn.Namespace},
			{"K8S_POD_NAME", pn.Name},
			{"K8S_POD_INFRA_CONTAINER_ID", string(pn.UID)},
			{"K8S_POD_UID", string(pn.UID)},
		},
	}
	if len(pn.Ports) > 0 {
		var pm []map[string]any
		for _, p := range pn.Ports {
			pm = append(pm, map[string]any{
				"hostPort": p.HostPort, "containerPort": p.ContainerPort,
				"protocol": strings.ToLower(p.Protocol), "hostIP": p.HostIP,
			})
		}
		rt.CapabilityArgs = map[string]any{"portMappings": pm}
	}
	return rt
}

// SetUp implements pod.Network. A namespace that exists with a cached
// result is the pod's from an earlier run, and is reused as it is (even
// before this run learnt the pod CIDR, from the conflist on disk).
func (n *Network) SetUp(ctx context.Context, pn pod.PodNetwork) (pod.Sandbox, error) {
	path := n.NetNSPath(pn.UID)
	rt := n.runtimeConf(pn, path)
	n.mu.Lock()
	list := n.list
	n.mu.Unlock()
	if list == nil {
		if isNetNS(path) {
			if disk, err := n.confList(); err == nil {
				if res, err := n.cni.GetNetworkListCachedResult(disk, rt); err == nil && res != nil {
					if sb, err := sandbox(path, res); err == nil {
						return sb, nil
					}
				}
			}
		}
		return pod.Sandbox{}, ErrNotReady
	}
	if isNetNS(path) {
		if res, err := n.cni.GetNetworkListCachedResult(list, rt); err == nil && res != nil {
			if sb, err := sandbox(path, res); err == nil {
				return sb, nil
			}
		}
		// A namespace without a usable result: start over.
		if err := n.TearDown(ctx, pn); err != nil {
			return pod.Sandbox{}, err
		}
	}
	if err := createNetNS(path); err != nil {
		return pod.Sandbox{}, err
	}
	sb, err := n.add(ctx, list, rt, path)
	if err != nil {
		return pod.Sandbox{}, errors.Join(err, n.TearDown(ctx, pn))
	}
	return sb, nil
}

func (n *Network) add(ctx context.Context, list *libcni.NetworkConfigList, rt *libcni.RuntimeConf, path string) (pod.Sandbox, error) {
	lo := *rt
	lo.IfName = "lo"
	lo.CapabilityArgs = nil
	if _, err := n.cni.AddNetwork(ctx, loopback(), &lo); err != nil {
		return pod.Sandbox{}, fmt.Errorf("loopback: %w", err)
	}
	res, err := n.cni.AddNetworkList(ctx, list, rt)
	if err != nil {
		return pod.Sandbox{}, fmt.Errorf("CNI ADD: %w", err)
	}
	return sandbox(path, res)
}

func sandbox(path string, res cnitypes.Result) (pod.Sandbox, error) {
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return pod.Sandbox{}, err
	}
	sb := pod.Sandbox{NetNSPath: path}
	for _, ip := range r.IPs {
		sb.IPs = append(sb.IPs, ip.Address.IP.String())
	}
	if len(sb.IPs) == 0 {
		return pod.Sandbox{}, errors.New("CNI result has no address")
	}
	return sb, nil
}

// TearDown implements pod.Network: CNI DEL (which releases the address
// and the port mappings), then the namespace goes.
func (n *Network) TearDown(ctx context.Context, pn pod.PodNetwork) error {
	path := n.NetNSPath(pn.UID)
	var errs []error
	list, err := n.confList()
	if err == nil {
		netns := path
		if !isNetNS(path) {
			netns = ""
		}
		rt := n.runtimeConf(pn, netns)
		if err := n.cni.DelNetworkList(ctx, list, rt); err != nil {
			errs = append(errs, fmt.Errorf("CNI DEL: %w", err))
		}
		if netns != "" {
			lo := *rt
			lo.IfName, lo.CapabilityArgs = "lo", nil
			_ = n.cni.DelNetwork(ctx, loopback(), &lo)
		}
	}
	if len(errs) == 0 {
		if err := removeNetNS(path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Lost implements pod.SandboxChecker: the sandbox's path is no network
// namespace any more.
func (n *Network) Lost(sb pod.Sandbox) bool {
	return sb.NetNSPath != "" && !isNetNS(sb.NetNSPath)
}

// Sandboxes lists the pod UIDs that have a namespace here.
func (n *Network) Sandboxes() ([]types.UID, error) {
	entries, err := os.ReadDir(n.opts.NetNSDir)
	if err != nil {
		return nil, err
	}
	var out []types.UID
	for _, e := range entries {
		if uid, ok := strings.CutPrefix(e.Name(), netnsPrefix); ok {
			out = append(out, types.UID(uid))
		}
	}
	return out, nil
}
