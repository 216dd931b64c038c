package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/ctl/pkg/certs"
)

// chainUser is the bench's writer in the chain phase: not in system:masters,
// so every request is decided by RBAC.
const chainUser = "bench-writer"

// chainPhase measures what the request chain costs (issue 3): protobuf pod
// creates by an RBAC-authorized user on a server with Node,RBAC and every
// admission plugin, then on a fresh server with AlwaysAllow and no
// admission. Each run gets a fresh server, so neither inherits the other's
// data. The servers' goroutines carry the pprof label chain=on or
// chain=off (chain=warmup for the untimed first run).
func (b *bench) chainPhase(ctx context.Context) error {
	configs := []struct {
		name, label string
		customize   func(*server.Options)
	}{
		// Every plugin, ServiceAccount too (test servers turn it off): the
		// namespace's default ServiceAccount is made below, as the
		// controller manager would.
		{"Node,RBAC + admission", "on", func(so *server.Options) { so.DisableAdmissionPlugins = nil }},
		{"AlwaysAllow, no admission", "off", func(so *server.Options) {
			so.AuthorizationModes = []string{"AlwaysAllow"}
			so.DisableAdmissionPlugins = server.AdmissionPlugins
		}},
	}
	// One untimed run first: the process's first server is slower (its
	// heap and runtime are still growing), whichever configuration it has.
	if _, _, err := b.chainRun(ctx, "warmup", configs[1].customize); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	// Then pairs, in alternating order (on then off, off then on, ...), so
	// that neither configuration always runs first and a slow spell of
	// this shared machine does not fall on one only; the cost is the
	// median over the pairs.
	var costs []float64
	for pair := 1; pair <= b.o.chainPairs; pair++ {
		var rates [2]float64
		for j := range configs {
			i := j
			if pair%2 == 0 {
				i = len(configs) - 1 - j
			}
			c := configs[i]
			rate, n, err := b.chainRun(ctx, c.label, c.customize)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			rates[i] = rate
			b.add(row{
				benchmark: fmt.Sprintf("Pod create through the request chain, protobuf (pair %d)", pair),
				setting:   fmt.Sprintf("%s; user %s; %d clients, %d pods", c.name, chainUser, b.o.clients, n),
				result:    fmt.Sprintf("**%.0f creates/s**", rate),
			})
		}
		cost := 100 * (1 - rates[0]/rates[1])
		costs = append(costs, cost)
		b.add(row{
			benchmark: fmt.Sprintf("Cost of authorization and admission (pair %d)", pair),
			setting:   fmt.Sprintf("%.0f vs %.0f creates/s", rates[0], rates[1]),
			result:    fmt.Sprintf("%.1f%% slower", cost),
		})
	}
	sort.Float64s(costs)
	median := costs[len(costs)/2]
	if len(costs)%2 == 0 {
		median = (costs[len(costs)/2-1] + costs[len(costs)/2]) / 2
	}
	b.add(row{
		benchmark: "Cost of authorization and admission, median",
		setting:   fmt.Sprintf("%d alternating pairs, range %.1f%% to %.1f%%", len(costs), costs[0], costs[len(costs)-1]),
		result:    fmt.Sprintf("**%.1f%% slower**", median),
		target:    "< 10% slower",
		met:       metStr(median < 10),
	})
	return nil
}

func (b *bench) chainRun(ctx context.Context, label string, customize func(*server.Options)) (float64, int, error) {
	dir, err := os.MkdirTemp("", "skiff-bench-chain-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	ts, stopEtcd, err := startServer(ctx, b.o, dir, label, customize)
	if err != nil {
		return 0, 0, err
	}
	defer stopEtcd()
	defer ts.TearDown()
	const ns = "bench-chain"
	if _, err := ts.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, 0, err
	}
	if _, err := ts.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, 0, err
	}
	if _, err := ts.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-writer"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create", "get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	if _, err := ts.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-writer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-writer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: chainUser}}}, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	ca, err := certs.LoadCA(ts.PKIDir)
	if err != nil {
		return 0, 0, err
	}
	kp, err := certs.IssueClientCert(ca, chainUser, nil)
	if err != nil {
		return 0, 0, err
	}
	key, err := kp.KeyPEM()
	if err != nil {
		return 0, 0, err
	}
	clients := make([]*kubernetes.Clientset, b.o.clients)
	for i := range clients {
		cfg := rest.CopyConfig(ts.AdminConfig)
		cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
		cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = kp.CertPEM(), key
		cfg.ContentType = contentProtobuf
		cfg.AcceptContentTypes = contentProtobuf + ", " + contentJSON
		cfg.Proxy = noProxy
		cfg.QPS, cfg.Burst, cfg.Timeout = -1, -1, 0
		if clients[i], err = kubernetes.NewForConfig(cfg); err != nil {
			return 0, 0, err
		}
		// Connect (and wait for RBAC to know the binding) before measuring.
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := clients[i].CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, nil
		}); err != nil {
			return 0, 0, fmt.Errorf("%s cannot list pods: %w", chainUser, err)
		}
	}
	progress("creating %d pods in %s as %s", b.o.creates, ts.URL, chainUser)
	r, err := createPods(ctx, clients, ns, "pod", b.o.creates, b.o.duration)
	if err != nil {
		return 0, 0, err
	}
	return r.rate(), r.n, nil
}
