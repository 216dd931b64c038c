package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"skiff.dev/component-base/certs"
)

// skiffHomeEnv names the environment variable that relocates the cluster
// state directory, .skiff by default.
const skiffHomeEnv = "SKIFF_HOME"

// CertsOptions are the flags of skiffctl certs.
type CertsOptions struct {
	Dir              string
	KubeconfigDir    string
	Server           string
	APIServerSANs    []string
	ServiceClusterIP string
	Nodes            []string
	NodeIPs          []string
	EtcdMembers      []string
	Force            bool
}

// NewCertsOptions returns the defaults: the PKI in $SKIFF_HOME/pki, or in
// ./.skiff/pki when SKIFF_HOME is not set.
func NewCertsOptions() *CertsOptions {
	home := os.Getenv(skiffHomeEnv)
	if home == "" {
		home = ".skiff"
	}
	return &CertsOptions{
		Dir:              filepath.Join(home, "pki"),
		Server:           certs.DefaultServer,
		ServiceClusterIP: certs.DefaultServiceClusterIP,
	}
}

// AddFlags binds the options to fs.
func (o *CertsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Dir, "dir", o.Dir, "Directory for certificates and keys; the default is $"+skiffHomeEnv+"/pki when "+skiffHomeEnv+" is set.")
	fs.StringVar(&o.KubeconfigDir, "kubeconfig-dir", o.KubeconfigDir, "Directory for the kubeconfigs (default: the parent of --dir).")
	fs.StringVar(&o.Server, "server", o.Server, "API server URL written into the kubeconfigs; its host is also a SAN of the API server certificate.")
	fs.StringSliceVar(&o.APIServerSANs, "apiserver-san", o.APIServerSANs, "Extra IP address or DNS name for the API server serving certificate (repeatable). Loopback, localhost, the kubernetes Service IP and names, the hostname and the machine's interface addresses are always included.")
	fs.StringVar(&o.ServiceClusterIP, "service-cluster-ip", o.ServiceClusterIP, "IP address of the kubernetes Service, a SAN of the API server certificate.")
	fs.StringSliceVar(&o.Nodes, "node", o.Nodes, "Node name to write kubelet certificates and a kubeconfig for (repeatable; default: this machine's hostname).")
	fs.StringSliceVar(&o.NodeIPs, "node-ip", o.NodeIPs, "NODE=IP: an IP SAN for the node's kubelet serving certificate (repeatable).")
	fs.StringSliceVar(&o.EtcdMembers, "etcd-member", o.EtcdMembers, "NAME=HOST: a member of an external etcd cluster (its --name) and an IP address or DNS name it is reached at (repeatable, also for several addresses of one member). Writes the etcd CA, each member's serving and peer certificates and apiserver-etcd-client; without it no etcd PKI is written.")
	fs.BoolVar(&o.Force, "force", o.Force, "Regenerate everything, the CA and the service-account key included.")
}

// Validate checks the flags that can be checked without looking at the
// machine; certs.Generate checks the rest.
func (o *CertsOptions) Validate() error {
	if o.Dir == "" {
		return fmt.Errorf("--dir must not be empty")
	}
	if net.ParseIP(o.ServiceClusterIP) == nil {
		return fmt.Errorf("--service-cluster-ip: invalid IP address %q", o.ServiceClusterIP)
	}
	if _, err := parseNodeIPs(o.NodeIPs); err != nil {
		return err
	}
	_, err := parseEtcdMembers(o.EtcdMembers)
	return err
}

// Config returns the certs.Options the flags describe.
func (o *CertsOptions) Config() (certs.Options, error) {
	if err := o.Validate(); err != nil {
		return certs.Options{}, err
	}
	nodeIPs, err := parseNodeIPs(o.NodeIPs)
	if err != nil {
		return certs.Options{}, err
	}
	etcdMembers, err := parseEtcdMembers(o.EtcdMembers)
	if err != nil {
		return certs.Options{}, err
	}
	return certs.Options{
		Dir:              o.Dir,
		KubeconfigDir:    o.KubeconfigDir,
		Server:           o.Server,
		APIServerSANs:    o.APIServerSANs,
		ServiceClusterIP: o.ServiceClusterIP,
		Nodes:            o.Nodes,
		NodeIPs:          nodeIPs,
		EtcdMembers:      etcdMembers,
		Force:            o.Force,
	}, nil
}

// parseNodeIPs turns NODE=IP pairs into a map from node to its IPs.
func parseNodeIPs(pairs []string) (map[string][]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(pairs))
	for _, pair := range pairs {
		node, ip, ok := strings.Cut(pair, "=")
		if !ok || node == "" {
			return nil, fmt.Errorf("--node-ip %q: want NODE=IP", pair)
		}
		if net.ParseIP(ip) == nil {
			return nil, fmt.Errorf("--node-ip %q: invalid IP address %q", pair, ip)
		}
		out[node] = append(out[node], ip)
	}
	return out, nil
}

// parseEtcdMembers turns NAME=HOST pairs into a map from member to its
// addresses; certs.Generate checks the names and hosts.
func parseEtcdMembers(pairs []string) (map[string][]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(pairs))
	for _, pair := range pairs {
		member, host, ok := strings.Cut(pair, "=")
		if !ok || member == "" || host == "" {
			return nil, fmt.Errorf("--etcd-member %q: want NAME=HOST", pair)
		}
		out[member] = append(out[member], host)
	}
	return out, nil
}

// NewCertsCommand returns the skiffctl certs command.
func NewCertsCommand() *cobra.Command {
	o := NewCertsOptions()
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Write the cluster CA, certificates, keys and kubeconfigs",
		Long: `Write the cluster's PKI and kubeconfigs.

In --dir: the cluster CA (ca.crt, ca.key); the API server's serving certificate
(apiserver) and its client certificate for kubelets (apiserver-kubelet-client);
client certificates for admin, controller-manager, scheduler, proxy and dns; for each
node a kubelet client certificate (kubelet-NODE-client) and serving certificate
(kubelet-NODE); the service-account signing key pair (sa.key, sa.pub); the
aggregation layer's front-proxy CA (front-proxy-ca.crt, front-proxy-ca.key) and
the client certificate it signs (front-proxy-client), which the API server
presents to aggregated API servers (--proxy-client-cert-file). With
--etcd-member, for an external etcd cluster: its own CA (etcd-ca.crt,
etcd-ca.key), for each member a certificate for its clients
(etcd-NAME-server, with loopback) and one for its peers (etcd-NAME-peer), both
good to serve and to dial, and the API server's etcd client certificate
(apiserver-etcd-client), which skiffctl etcd uses too.

In --kubeconfig-dir: admin.kubeconfig, controller-manager.kubeconfig,
scheduler.kubeconfig, proxy.kubeconfig, dns.kubeconfig and kubelet-NODE.kubeconfig, with the CA
and client credentials embedded.

Running it again keeps the CA and every certificate that is still valid and
right, and writes only what is missing or wrong: for example the API server
certificate when it does not cover a requested SAN. --force regenerates all.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := o.Config()
			if err != nil {
				return err
			}
			return RunCerts(cmd.Context(), cmd.OutOrStdout(), opts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// RunCerts generates the PKI and prints what was written and kept.
func RunCerts(ctx context.Context, out io.Writer, opts certs.Options) error {
	res, err := certs.Generate(ctx, opts)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, f := range res.Files {
		line := fmt.Sprintf("%s\t%s", f.Action, f.Path)
		if f.Reason != "" {
			line += "\t" + f.Reason
		}
		if _, err := fmt.Fprintln(tw, line); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(tw, "%d written, %d kept\n", len(res.Written()), len(res.Kept())); err != nil {
		return err
	}
	return tw.Flush()
}
