package integration

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/server"
)

// TestComponentStatuses: `kubectl get componentstatuses` (deprecated
// upstream, still served) probes each component's /healthz when asked and
// etcd: a healthy one says what it answered, an unhealthy one why in its
// message, as upstream's; every answer carries upstream's deprecation
// warning; selectors filter, an unknown name is a 404, and nothing but get
// and list is allowed.
func TestComponentStatuses(t *testing.T) {
	healthy := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer healthy.Close()
	failing := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "[-]leaderElection failed", http.StatusInternalServerError)
	}))
	defer failing.Close()
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "https://" + l.Addr().String() + "/healthz"
	l.Close()

	ts := start(t, func(o *server.Options) {
		o.ComponentHealthURLs = map[string]string{
			"scheduler":          healthy.URL + "/healthz",
			"controller-manager": failing.URL + "/healthz",
			"gone":               gone,
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", "--kubeconfig", ts.Kubeconfig, "get", "cs")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl get cs: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "Warning: v1 ComponentStatus is deprecated in v1.19+") {
		t.Errorf("kubectl's stderr has no deprecation warning: %q", stderr.String())
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Fields(line)
		rows[f[0]] = strings.Join(f, " ")
	}
	want := map[string]string{
		"NAME":               "NAME STATUS MESSAGE ERROR",
		"controller-manager": "controller-manager Unhealthy HTTP probe failed with statuscode: 500",
		"etcd-0":             "etcd-0 Healthy ok",
		"scheduler":          "scheduler Healthy ok",
	}
	for name, row := range want {
		if rows[name] != row {
			t.Errorf("kubectl get cs, row %s: %q, want %q\n%s", name, rows[name], row, stdout.String())
		}
	}
	if !strings.HasPrefix(rows["gone"], "gone Unhealthy Get \"https://"+strings.TrimPrefix(gone, "https://")+"\": dial tcp") ||
		!strings.Contains(rows["gone"], "connection refused") {
		t.Errorf("kubectl get cs, row gone: %q\n%s", rows["gone"], stdout.String())
	}
	if len(rows) != 5 {
		t.Errorf("kubectl get cs: %d rows, want a header and 4\n%s", len(rows), stdout.String())
	}

	css := ts.Client.CoreV1().ComponentStatuses()
	cs, err := css.Get(ctx, "etcd-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Conditions) != 1 || cs.Conditions[0] != (corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}) {
		t.Errorf("etcd-0: %+v", cs.Conditions)
	}
	if _, err := css.Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an unknown component: %v, want 404", err)
	}
	list, err := css.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=scheduler"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "scheduler" {
		t.Errorf("list by name: %v %+v", err, list)
	}
	list, err = css.List(ctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("list by a label none has: %v %+v", err, list)
	}
	if _, err := css.List(ctx, metav1.ListOptions{LabelSelector: "a in (b"}); !apierrors.IsBadRequest(err) {
		t.Errorf("list with a malformed selector: %v, want 400", err)
	}
	if _, err := css.Watch(ctx, metav1.ListOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("watch: %v, want 405", err)
	}
	if err := css.Delete(ctx, "scheduler", metav1.DeleteOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("delete: %v, want 405", err)
	}

	if r := discovered(t, ts, "v1", "componentstatuses"); r.Kind != "ComponentStatus" || r.Namespaced ||
		strings.Join(r.Verbs, ",") != "get,list" || strings.Join(r.ShortNames, ",") != "cs" {
		t.Errorf("discovery of v1 does not list componentstatuses (get, list; cs): %+v", r)
	}
}
