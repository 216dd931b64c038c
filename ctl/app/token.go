package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/cluster-bootstrap/util/tokens"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/join"
)

// NodeBootstrapGroup is the extra group of node-joining tokens, kubeadm's,
// which the API server's bootstrap policy lets ask for (and have approved)
// a node client certificate.
const NodeBootstrapGroup = "system:bootstrappers:kubeadm:default-node-token"

// clusterInfoRole lets anyone read cluster-info, as kubeadm's of the same
// name.
const clusterInfoRole = "kubeadm:bootstrap-signer-clusterinfo"

// TokenCreateOptions are the flags of skiffctl token create.
type TokenCreateOptions struct {
	TTL         time.Duration
	Description string
	Usages      []string
	Groups      []string
	// Server is the API server's URL the joining nodes use (and cluster-info
	// holds); empty: cluster-info's, else the kubeconfig's.
	Server string
	// PrintJoinCommand prints the join command (on by default), else only
	// the token.
	PrintJoinCommand bool
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// NewTokenCommand returns skiffctl token (create, list, delete).
func NewTokenCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage bootstrap tokens, with which new nodes join the cluster",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	o := &TokenCreateOptions{TTL: 24 * time.Hour, Usages: []string{"signing", "authentication"}, Groups: []string{NodeBootstrapGroup}, PrintJoinCommand: true}
	create := &cobra.Command{
		Use:   "create [TOKEN]",
		Short: "Create a bootstrap token and print the command that joins a node with it",
		Long: "Create a bootstrap token (a bootstrap.kubernetes.io/token Secret in kube-system), make sure\n" +
			"kube-public/cluster-info holds the server and CA and may be read anonymously, and print\n" +
			"'skiffctl join' with the server, the token and the CA's public key hash. The API server needs\n" +
			"--enable-bootstrap-token-auth and --anonymous-auth, the controller manager the bootstrapsigner\n" +
			"controller and --cluster-signing-cert-file/--cluster-signing-key-file.",
		Example: `  skiffctl token create
  skiffctl token create --ttl 2h --server https://192.0.2.10:6443
  skiffctl token create abcdef.0123456789abcdef --print-join-command=false`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			token := ""
			if len(args) == 1 {
				token = args[0]
			}
			return o.Run(cmd.Context(), f, cmd.OutOrStdout(), token)
		},
	}
	fs := create.Flags()
	fs.DurationVar(&o.TTL, "ttl", o.TTL, "How long the token lasts (0: forever).")
	fs.StringVar(&o.Description, "description", o.Description, "What the token is for.")
	fs.StringSliceVar(&o.Usages, "usages", o.Usages, "What the token may be used for: signing (cluster-info discovery), authentication (TLS bootstrap).")
	fs.StringSliceVar(&o.Groups, "groups", o.Groups, "Extra groups the token authenticates in (system:bootstrappers:...).")
	fs.StringVar(&o.Server, "server", o.Server, "The API server URL joining nodes use; empty: cluster-info's, else the kubeconfig's.")
	fs.BoolVar(&o.PrintJoinCommand, "print-join-command", o.PrintJoinCommand, "Print the whole join command; false: only the token.")
	cmd.AddCommand(create, newTokenListCommand(f), newTokenDeleteCommand(f))
	return cmd
}

// Validate checks the flags.
func (o *TokenCreateOptions) Validate(token string) error {
	var errs []error
	if token != "" && !bootstraputil.IsValidBootstrapToken(token) {
		errs = append(errs, fmt.Errorf("token %q is not of the form [a-z0-9]{6}.[a-z0-9]{16}", token))
	}
	if o.TTL < 0 {
		errs = append(errs, errors.New("--ttl must not be negative"))
	}
	if err := bootstraputil.ValidateUsages(o.Usages); err != nil {
		errs = append(errs, fmt.Errorf("--usages: %w", err))
	}
	for _, g := range o.Groups {
		if err := bootstraputil.ValidateBootstrapGroupName(g); err != nil {
			errs = append(errs, fmt.Errorf("--groups: %w", err))
		}
	}
	if o.Server != "" && !strings.HasPrefix(o.Server, "https://") {
		errs = append(errs, fmt.Errorf("--server %q must be an https:// URL", o.Server))
	}
	return errors.Join(errs...)
}

// Secret is the token's Secret.
func (o *TokenCreateOptions) Secret(token string) (*corev1.Secret, error) {
	id, secret, err := tokens.ParseToken(token)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{bootstrapapi.BootstrapTokenIDKey: []byte(id), bootstrapapi.BootstrapTokenSecretKey: []byte(secret)}
	if o.Description != "" {
		data[bootstrapapi.BootstrapTokenDescriptionKey] = []byte(o.Description)
	}
	if o.TTL > 0 {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(now().Add(o.TTL).UTC().Format(time.RFC3339))
	}
	for _, u := range o.Usages {
		data[bootstrapapi.BootstrapTokenUsagePrefix+u] = []byte("true")
	}
	if len(o.Groups) > 0 {
		data[bootstrapapi.BootstrapTokenExtraGroupsKey] = []byte(strings.Join(o.Groups, ","))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretType(bootstrapapi.SecretTypeBootstrapToken),
		Data:       data,
	}, nil
}

// Run creates the token and prints the join command.
func (o *TokenCreateOptions) Run(ctx context.Context, f *cli.Factory, out io.Writer, token string) error {
	if err := o.Validate(token); err != nil {
		return err
	}
	if token == "" {
		var err error
		if token, err = bootstraputil.GenerateBootstrapToken(); err != nil {
			return err
		}
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return err
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return err
		}
	}
	if len(ca) == 0 {
		return errors.New("the kubeconfig has no certificate authority: joining nodes need the cluster CA")
	}
	client, err := f.Clientset()
	if err != nil {
		return err
	}
	// Another token create may write cluster-info at the same moment: read
	// it again and go on from there.
	var server string
	for attempt := 0; ; attempt++ {
		server, err = o.ensureClusterInfo(ctx, client, cfg.Host, ca)
		if err == nil {
			break
		}
		if attempt == 2 || !(apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err)) {
			return err
		}
	}
	secret, err := o.Secret(token)
	if err != nil {
		return err
	}
	if _, err := client.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("a token with ID %q already exists", secret.Data[bootstrapapi.BootstrapTokenIDKey])
		}
		return err
	}
	if !o.PrintJoinCommand {
		_, err := fmt.Fprintln(out, token)
		return err
	}
	certs, err := certutil.ParseCertsPEM(ca)
	if err != nil {
		return fmt.Errorf("the kubeconfig's CA: %w", err)
	}
	_, err = fmt.Fprintf(out, "skiffctl join %s --token %s --discovery-token-ca-cert-hash %s\n", server, token, join.CAHash(certs[0]))
	return err
}

// ensureClusterInfo makes sure kube-public/cluster-info holds the server
// and CA (made when missing, its server changed when --server says so) and
// that anyone may read it, as kubeadm init does; it returns the server the
// join command names.
func (o *TokenCreateOptions) ensureClusterInfo(ctx context.Context, client kubernetes.Interface, kubeconfigServer string, ca []byte) (string, error) {
	cms := client.CoreV1().ConfigMaps(metav1.NamespacePublic)
	cm, err := cms.Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return "", err
	}
	current := ""
	if !missing {
		current, _ = join.ServerOf(cm.Data[bootstrapapi.KubeConfigKey])
	}
	server := o.Server
	if server == "" {
		server = current
	}
	if server == "" {
		server = kubeconfigServer
	}
	if missing || server != current {
		kubeconfig, err := join.ClusterInfoKubeconfig(server, ca)
		if err != nil {
			return "", err
		}
		if missing {
			_, err = cms.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo, Namespace: metav1.NamespacePublic},
				Data:       map[string]string{bootstrapapi.KubeConfigKey: string(kubeconfig)},
			}, metav1.CreateOptions{})
		} else {
			cm = cm.DeepCopy()
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[bootstrapapi.KubeConfigKey] = string(kubeconfig)
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err != nil {
			return "", fmt.Errorf("writing kube-public/cluster-info: %w", err)
		}
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: clusterInfoRole, Namespace: metav1.NamespacePublic},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{bootstrapapi.ConfigMapClusterInfo}}},
	}
	if _, err := client.RbacV1().Roles(metav1.NamespacePublic).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("the cluster-info Role: %w", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterInfoRole, Namespace: metav1.NamespacePublic},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: clusterInfoRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:anonymous"}},
	}
	if _, err := client.RbacV1().RoleBindings(metav1.NamespacePublic).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("the cluster-info RoleBinding: %w", err)
	}
	return server, nil
}

func newTokenListCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the bootstrap tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, err := f.Clientset()
			if err != nil {
				return err
			}
			list, err := client.CoreV1().Secrets(metav1.NamespaceSystem).List(cmd.Context(), metav1.ListOptions{
				FieldSelector: "type=" + string(bootstrapapi.SecretTypeBootstrapToken)})
			if err != nil {
				return err
			}
			sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 3, ' ', 0)
			fmt.Fprintln(w, "TOKEN ID\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
			now := time.Now()
			for i := range list.Items {
				s := &list.Items[i]
				id := bootstrapsecretutil.GetData(s, bootstrapapi.BootstrapTokenIDKey)
				ttl, expires := "<forever>", "<never>"
				if exp := bootstrapsecretutil.GetData(s, bootstrapapi.BootstrapTokenExpirationKey); exp != "" {
					expires = exp
					left, expired := bootstrapsecretutil.GetExpiration(s, now)
					ttl = left.Round(time.Second).String()
					if expired {
						ttl = "<expired>"
					}
				}
				var usages []string
				for k, v := range s.Data {
					if u, ok := strings.CutPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix); ok && string(v) == "true" {
						usages = append(usages, u)
					}
				}
				sort.Strings(usages)
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", id, ttl, expires, strings.Join(usages, ","),
					bootstrapsecretutil.GetData(s, bootstrapapi.BootstrapTokenDescriptionKey), bootstrapsecretutil.GetData(s, bootstrapapi.BootstrapTokenExtraGroupsKey))
			}
			return w.Flush()
		},
	}
}

func newTokenDeleteCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "delete TOKEN_OR_ID...",
		Short: "Delete bootstrap tokens (by ID or whole token)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			client, err := f.Clientset()
			if err != nil {
				return err
			}
			for _, a := range args {
				id := a
				if tid, _, err := tokens.ParseToken(a); err == nil {
					id = tid
				}
				if !bootstraputil.IsValidBootstrapTokenID(id) {
					return fmt.Errorf("%q is neither a bootstrap token nor a token ID ([a-z0-9]{6})", a)
				}
				name := bootstraputil.BootstrapTokenSecretName(id)
				if err := client.CoreV1().Secrets(metav1.NamespaceSystem).Delete(cmd.Context(), name, metav1.DeleteOptions{}); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "bootstrap token %q deleted\n", id)
			}
			return nil
		},
	}
}
