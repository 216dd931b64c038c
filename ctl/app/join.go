package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"skiff.dev/ctl/pkg/join"
)

// JoinOptions are the flags of skiffctl join.
type JoinOptions struct {
	join.Options
	// BootstrapKubeconfig is where the kubelet's bootstrap kubeconfig is
	// written; CAFile where the verified cluster CA is (the kubelet's
	// --client-ca-file, as kubeadm join writes pki/ca.crt).
	BootstrapKubeconfig string
	CAFile              string
}

// NewJoinCommand returns skiffctl join: a new node's side of 'skiffctl token
// create'.
func NewJoinCommand() *cobra.Command {
	o := &JoinOptions{BootstrapKubeconfig: "/etc/skiff/bootstrap-kubelet.kubeconfig", CAFile: "/etc/skiff/pki/ca.crt"}
	o.Timeout = 5 * time.Minute
	cmd := &cobra.Command{
		Use:   "join SERVER --token TOKEN --discovery-token-ca-cert-hash sha256:HASH",
		Short: "Prepare this machine's kubelet to join the cluster with a bootstrap token",
		Long: "Find the cluster's CA with a bootstrap token, as kubeadm join does: read kube-public/cluster-info\n" +
			"from SERVER, check its signature for the token and the CA's public key hash, and write the kubelet's\n" +
			"bootstrap kubeconfig. The kubelet started with --bootstrap-kubeconfig then asks for its client\n" +
			"certificate, which the controller manager approves and signs, and registers the node.",
		Example: `  skiffctl join https://192.0.2.10:6443 --token abcdef.0123456789abcdef \
      --discovery-token-ca-cert-hash sha256:1234...cdef`,
		Args: exactArgs(1, "join needs the API server's address: https://HOST:PORT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), cmd.OutOrStdout(), args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Token, "token", "", "The bootstrap token, from 'skiffctl token create'.")
	fs.StringSliceVar(&o.CAHashes, "discovery-token-ca-cert-hash", nil, "The cluster CA's public key hash, sha256:<hex>; the CA found must match one.")
	fs.BoolVar(&o.UnsafeSkipCAVerification, "discovery-token-unsafe-skip-ca-verification", false, "Trust the CA cluster-info holds without a hash to check it against.")
	fs.DurationVar(&o.Timeout, "discovery-timeout", o.Timeout, "How long to wait for cluster-info to be signed for the token.")
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig, "Where to write the kubelet's bootstrap kubeconfig.")
	fs.StringVar(&o.CAFile, "ca-file", o.CAFile, "Where to write the verified cluster CA (the kubelet's --client-ca-file); empty: not written.")
	return cmd
}

// Run discovers the cluster and writes the bootstrap kubeconfig.
func (o *JoinOptions) Run(ctx context.Context, out io.Writer, server string) error {
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	o.Server = server
	res, err := join.Discover(ctx, o.Options)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.BootstrapKubeconfig), 0o755); err != nil {
		return err
	}
	if err := clientcmd.WriteToFile(*join.BootstrapKubeconfig(res, o.Token), o.BootstrapKubeconfig); err != nil {
		return fmt.Errorf("writing the bootstrap kubeconfig: %w", err)
	}
	clientCA := ""
	if o.CAFile != "" {
		if err := os.MkdirAll(filepath.Dir(o.CAFile), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(o.CAFile, res.CA, 0o644); err != nil {
			return fmt.Errorf("writing the cluster CA: %w", err)
		}
		clientCA = " --client-ca-file=" + o.CAFile
	}
	_, err = fmt.Fprintf(out, "The cluster at %s is verified; the bootstrap kubeconfig is %s.\n"+
		"Start the kubelet with it to join:\n"+
		"  skiff-kubelet --bootstrap-kubeconfig=%s --kubeconfig=/etc/skiff/kubelet.kubeconfig --rotate-certificates%s\n",
		res.Server, o.BootstrapKubeconfig, o.BootstrapKubeconfig, clientCA)
	return err
}
