package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/duration"
)

// EtcdClientOptions are the flags that reach one etcd member: its client
// URL and the TLS files, as etcdctl names them.
type EtcdClientOptions struct {
	Endpoint       string
	CACert         string
	Cert           string
	Key            string
	DialTimeout    time.Duration
	CommandTimeout time.Duration
}

// AddFlags binds the options to fs.
func (o *EtcdClientOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Endpoint, "endpoint", "https://127.0.0.1:2379", "Client URL of the one etcd member to talk to (a snapshot is one member's state).")
	fs.StringVar(&o.CACert, "cacert", "", "CA bundle that signs the member's serving certificate (skiffctl certs --etcd-member: etcd-ca.crt); empty: the system roots.")
	fs.StringVar(&o.Cert, "cert", "", "Client certificate for the member (skiffctl certs --etcd-member: apiserver-etcd-client.crt).")
	fs.StringVar(&o.Key, "key", "", "Private key of --cert.")
	fs.DurationVar(&o.DialTimeout, "dial-timeout", 5*time.Second, "How long connecting to the member may take.")
	fs.DurationVar(&o.CommandTimeout, "command-timeout", 5*time.Minute, "How long the whole command may take.")
}

// clientConfig checks the flags and returns the etcd client configuration.
func (o *EtcdClientOptions) clientConfig(ctx context.Context) (clientv3.Config, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return clientv3.Config{}, fmt.Errorf("--endpoint %q: want one URL such as https://10.0.0.11:2379", o.Endpoint)
	}
	if (o.Cert == "") != (o.Key == "") {
		return clientv3.Config{}, errors.New("--cert and --key go together")
	}
	if u.Scheme == "http" && (o.Cert != "" || o.CACert != "") {
		return clientv3.Config{}, fmt.Errorf("--endpoint %q is plain http, but TLS files were given: use https", o.Endpoint)
	}
	cfg := clientv3.Config{
		Endpoints:   []string{o.Endpoint},
		DialTimeout: o.DialTimeout,
		Context:     ctx,
		Logger:      zap.NewNop(),
	}
	if u.Scheme == "https" {
		var tlsCfg *tls.Config
		info := transport.TLSInfo{CertFile: o.Cert, KeyFile: o.Key, TrustedCAFile: o.CACert}
		if info.Empty() && o.CACert == "" {
			tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
		} else if tlsCfg, err = info.ClientConfig(); err != nil {
			return clientv3.Config{}, fmt.Errorf("etcd TLS files: %w", err)
		}
		cfg.TLS = tlsCfg
	}
	return cfg, nil
}

// NewEtcdCommand returns skiffctl etcd, which backs up and restores the
// cluster's etcd as etcdctl and etcdutl do.
func NewEtcdCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Back up and restore the cluster's etcd",
		Long: `Back up and restore the etcd cluster that the API servers store the cluster in
(an external one: --etcd-servers). See docs/operations.md for the procedure.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	snap := &cobra.Command{
		Use:   "snapshot",
		Short: "Save, inspect and restore etcd snapshots",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	snap.AddCommand(newEtcdSnapshotSaveCommand(), newEtcdSnapshotRestoreCommand(), newEtcdSnapshotStatusCommand())
	cmd.AddCommand(snap)
	return cmd
}

func newEtcdSnapshotSaveCommand() *cobra.Command {
	o := &EtcdClientOptions{}
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Save a snapshot of one etcd member's keyspace to FILE",
		Long: `Save a snapshot of the keyspace of the etcd member at --endpoint to FILE, as
etcdctl snapshot save does: the member streams its database, which is written to
FILE.part, checked against the digest the member appends, and renamed to FILE.`,
		Example: `  skiffctl etcd snapshot save /var/backups/skiff-etcd.db \
    --endpoint https://10.0.0.11:2379 --cacert /etc/skiff/pki/etcd-ca.crt \
    --cert /etc/skiff/pki/apiserver-etcd-client.crt --key /etc/skiff/pki/apiserver-etcd-client.key`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEtcdSnapshotSave(cmd.Context(), cmd.OutOrStdout(), o, args[0])
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runEtcdSnapshotSave(ctx context.Context, out io.Writer, o *EtcdClientOptions, path string) error {
	if path == "" {
		return errors.New("FILE must not be empty")
	}
	ctx, cancel := context.WithTimeout(ctx, o.CommandTimeout)
	defer cancel()
	cfg, err := o.clientConfig(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := snapshot.NewV3(zap.NewNop()).Save(ctx, cfg, path); err != nil {
		// %v, not %w: the TLS errors inside would otherwise be explained
		// as the API server's (cli.Explain).
		return fmt.Errorf("saving a snapshot of etcd %s: %v", o.Endpoint, err)
	}
	st, err := snapshot.NewV3(zap.NewNop()).Status(path)
	if err != nil {
		return fmt.Errorf("checking the snapshot just saved: %w", err)
	}
	_, err = fmt.Fprintf(out, "Snapshot saved at %s in %s: revision %d, %d keys, %d bytes\n",
		path, duration.HumanDuration(time.Since(start)), st.Revision, st.TotalKey, st.TotalSize)
	return err
}

func newEtcdSnapshotStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status FILE",
		Short: "Print a snapshot file's hash, revision, key count and size",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := snapshot.NewV3(zap.NewNop()).Status(args[0])
			if err != nil {
				return fmt.Errorf("snapshot %s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "HASH\tREVISION\tTOTAL KEYS\tTOTAL SIZE\n%x\t%d\t%d\t%d\n", st.Hash, st.Revision, st.TotalKey, st.TotalSize)
			return err
		},
	}
}

// EtcdRestoreOptions are the flags of skiffctl etcd snapshot restore, named
// and defaulted as etcdutl's.
type EtcdRestoreOptions struct {
	DataDir             string
	WALDir              string
	Name                string
	InitialCluster      string
	InitialClusterToken string
	PeerURLs            string
	SkipHashCheck       bool
	BumpRevision        uint64
	MarkCompacted       bool
}

// AddFlags binds the options to fs.
func (o *EtcdRestoreOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", "", "The new member's data directory; it must not exist or be empty. Required.")
	fs.StringVar(&o.WALDir, "wal-dir", "", "The new member's WAL directory; empty: <data-dir>/member/wal.")
	fs.StringVar(&o.Name, "name", "default", "The member's --name, as etcd will be started with it.")
	fs.StringVar(&o.InitialCluster, "initial-cluster", "", "Every member of the restored cluster, NAME=PEER-URL,...; empty: --name=--initial-advertise-peer-urls (one member).")
	fs.StringVar(&o.InitialClusterToken, "initial-cluster-token", "etcd-cluster", "The restored cluster's --initial-cluster-token; the same on every member.")
	fs.StringVar(&o.PeerURLs, "initial-advertise-peer-urls", "http://localhost:2380", "This member's peer URLs, comma-separated, as in --initial-cluster.")
	fs.BoolVar(&o.SkipHashCheck, "skip-hash-check", false, "Restore a database file copied from a data directory (member/snap/db), which has no digest to check.")
	fs.Uint64Var(&o.BumpRevision, "bump-revision", 0, "Raise the restored revision by this much (with --mark-compacted), so that watchers and caches of the API servers, which saw later revisions, list again instead of missing changes.")
	fs.BoolVar(&o.MarkCompacted, "mark-compacted", false, "Mark the restored revision compacted (with --bump-revision): every watch from an older revision gets 410 Gone and lists again.")
}

// restoreConfig checks the flags and returns etcdutl's restore configuration.
func (o *EtcdRestoreOptions) restoreConfig(path string) (snapshot.RestoreConfig, error) {
	if path == "" {
		return snapshot.RestoreConfig{}, errors.New("FILE must not be empty")
	}
	if o.DataDir == "" {
		return snapshot.RestoreConfig{}, errors.New("--data-dir is required: the directory the restored member will run on")
	}
	if o.Name == "" {
		return snapshot.RestoreConfig{}, errors.New("--name must not be empty")
	}
	if (o.BumpRevision > 0) != o.MarkCompacted {
		return snapshot.RestoreConfig{}, errors.New("--bump-revision and --mark-compacted go together")
	}
	cluster := o.InitialCluster
	if cluster == "" {
		var members []string
		for _, u := range strings.Split(o.PeerURLs, ",") {
			members = append(members, o.Name+"="+u)
		}
		cluster = strings.Join(members, ",")
	}
	return snapshot.RestoreConfig{
		SnapshotPath:        path,
		Name:                o.Name,
		OutputDataDir:       o.DataDir,
		OutputWALDir:        o.WALDir,
		PeerURLs:            strings.Split(o.PeerURLs, ","),
		InitialCluster:      cluster,
		InitialClusterToken: o.InitialClusterToken,
		SkipHashCheck:       o.SkipHashCheck,
		RevisionBump:        o.BumpRevision,
		MarkCompacted:       o.MarkCompacted,
	}, nil
}

func newEtcdSnapshotRestoreCommand() *cobra.Command {
	o := &EtcdRestoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore FILE --data-dir DIR",
		Short: "Make a new etcd member's data directory from a snapshot",
		Long: `Make a data directory for a new etcd member from the snapshot in FILE, as
etcdutl snapshot restore does: the keyspace of the snapshot, and a new cluster
membership (--name, --initial-cluster, --initial-cluster-token,
--initial-advertise-peer-urls) that etcd must then be started with. Run it on
every member of the new cluster with the same snapshot, --initial-cluster and
--initial-cluster-token and the member's own --name and peer URLs.`,
		Example: `  skiffctl etcd snapshot restore /var/backups/skiff-etcd.db --data-dir /var/lib/etcd-restored \
    --name cp1 --initial-advertise-peer-urls https://10.0.0.11:2380 \
    --initial-cluster cp1=https://10.0.0.11:2380,cp2=https://10.0.0.12:2380,cp3=https://10.0.0.13:2380 \
    --initial-cluster-token skiff-etcd-restored --bump-revision 1000000000 --mark-compacted`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := o.restoreConfig(args[0])
			if err != nil {
				return err
			}
			if err := snapshot.NewV3(zap.NewNop()).Restore(cfg); err != nil {
				return fmt.Errorf("restoring %s into %s: %w", args[0], o.DataDir, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Restored %s into %s as member %s of %s\n", args[0], o.DataDir, cfg.Name, cfg.InitialCluster)
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
