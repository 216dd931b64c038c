package integration

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/testserver"
	"skiff.dev/apiserver/pkg/testserver/fakekubelet"
	"skiff.dev/component-base/certs"
)

// kubeletFixture is a test server, a fake kubelet registered as node
// "fake-node", and pods: "one" (one container, on the node), "multi"
// (containers a and b, on the node) and "pending" (no node).
func kubeletFixture(t *testing.T) (*testserver.TestServer, *fakekubelet.Kubelet) {
	t.Helper()
	ts := testserver.Start(t, nil)
	k := fakekubelet.Start(t, ts.PKIDir)
	c := ctx(t)
	if _, err := ts.Client.CoreV1().Nodes().Create(c, k.Node("fake-node"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, node string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "busybox"})
		}
		return p
	}
	for _, p := range []*corev1.Pod{pod("one", "fake-node", "c1"), pod("multi", "fake-node", "a", "b"), pod("pending", "", "c1")} {
		if _, err := ts.Client.CoreV1().Pods("default").Create(c, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return ts, k
}

// logs reads a pod's log as kubectl does (Stream, which turns an error
// answer into its Status; DoRaw would not).
func logs(c context.Context, client kubernetes.Interface, pod string, opts *corev1.PodLogOptions) (string, error) {
	stream, err := client.CoreV1().Pods("default").GetLogs(pod, opts).Stream(c)
	if err != nil {
		return "", err
	}
	defer stream.Close()
	b, err := io.ReadAll(stream)
	return string(b), err
}

func TestPodLogs(t *testing.T) {
	ts, k := kubeletFixture(t)
	c := ctx(t)
	pods := ts.Client.CoreV1().Pods("default")

	t.Run("lines and query", func(t *testing.T) {
		opts := &corev1.PodLogOptions{TailLines: ptr.To[int64](10), Timestamps: true, SinceSeconds: ptr.To[int64](60), LimitBytes: ptr.To[int64](4096), Previous: true}
		body, err := logs(c, ts.Client, "one", opts)
		if err != nil {
			t.Fatal(err)
		}
		if body != "line 1\nline 2\nline 3\n" {
			t.Errorf("logs = %q", body)
		}
		got := k.LastRequest()
		if got.Path != "/containerLogs/default/one/c1" {
			t.Errorf("kubelet path = %s", got.Path)
		}
		want := url.Values{"tailLines": {"10"}, "timestamps": {"true"}, "sinceSeconds": {"60"}, "limitBytes": {"4096"}, "previous": {"true"}}
		if got.Query().Encode() != want.Encode() {
			t.Errorf("kubelet query = %s, want %s", got.RawQuery, want.Encode())
		}
	})

	t.Run("named container", func(t *testing.T) {
		if _, err := logs(c, ts.Client, "multi", &corev1.PodLogOptions{Container: "b"}); err != nil {
			t.Fatal(err)
		}
		if got := k.LastRequest().Path; got != "/containerLogs/default/multi/b" {
			t.Errorf("kubelet path = %s", got)
		}
	})

	t.Run("follow streams", func(t *testing.T) {
		sctx, cancel := context.WithCancel(c)
		defer cancel()
		stream, err := pods.GetLogs("one", &corev1.PodLogOptions{Follow: true}).Stream(sctx)
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		r := bufio.NewReader(stream)
		readLine := func() string {
			t.Helper()
			l, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			return l
		}
		// The first line arrives while the kubelet's stream is still open.
		if l := readLine(); l != "line 1\n" {
			t.Errorf("first line = %q", l)
		}
		select {
		case k.FollowNext <- "later line":
		case <-time.After(30 * time.Second):
			t.Fatal("the kubelet's stream was not open")
		}
		if l := readLine(); l != "later line\n" {
			t.Errorf("second line = %q", l)
		}
		if q := k.LastRequest().Query(); q.Get("follow") != "true" {
			t.Errorf("kubelet query = %v, want follow=true", q)
		}
		// When the client goes, the API server's request to the kubelet ends.
		cancel()
		stream.Close()
		select {
		case <-k.FollowDone:
		case <-time.After(30 * time.Second):
			t.Fatal("the kubelet's stream did not end after the client went")
		}
	})

	for _, tc := range []struct {
		name, pod, container, want string
		code                       int
	}{
		{name: "no node", pod: "pending", code: 400, want: "pod pending does not have a host assigned"},
		{name: "several containers", pod: "multi", code: 400, want: "a container name must be specified for pod multi, choose one of: [a b]"},
		{name: "unknown container", pod: "one", container: "zz", code: 400, want: "container zz is not valid for pod one"},
		{name: "missing pod", pod: "nope", code: 404, want: `pods "nope" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := logs(c, ts.Client, tc.pod, &corev1.PodLogOptions{Container: tc.container})
			if code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (code %d), want %d %q", err, code(err), tc.code, tc.want)
			}
		})
	}

	t.Run("kubelet errors", func(t *testing.T) {
		// The fake kubelet answers 404 for a pod called "missing" and 400
		// for one called "waiting".
		for _, name := range []string{"missing", "waiting"} {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
				Spec: corev1.PodSpec{NodeName: "fake-node", Containers: []corev1.Container{{Name: "c1", Image: "busybox"}}}}
			if _, err := pods.Create(c, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// As upstream's GenericHttpResponseChecker: the kubelet's code; a
		// 400's text is the message.
		_, err := logs(c, ts.Client, "missing", &corev1.PodLogOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("missing: err = %v, want the kubelet's 404", err)
		}
		_, err = logs(c, ts.Client, "waiting", &corev1.PodLogOptions{})
		if !apierrors.IsBadRequest(err) || err.Error() != `container "c1" in pod "waiting" is waiting to start: ContainerCreating` {
			t.Errorf("waiting: err = %v, want the kubelet's 400 and text", err)
		}
	})

	t.Run("invalid options", func(t *testing.T) {
		_, err := logs(c, ts.Client, "one", &corev1.PodLogOptions{TailLines: ptr.To[int64](-1)})
		if !apierrors.IsInvalid(err) {
			t.Errorf("err = %v, want Invalid", err)
		}
	})
}

// grant binds a namespaced role with rules to user in default.
func grant(t *testing.T, ts *testserver.TestServer, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	c := ctx(t)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: "default"}, Rules: rules}
	if _, err := ts.Client.RbacV1().Roles("default").Create(c, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: "default"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := ts.Client.RbacV1().RoleBindings("default").Create(c, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// eventually polls fn until it returns nil (the authorizer learns of RBAC
// objects through a watch).
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx(t), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = fn()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}

func TestPodLogsAuthorization(t *testing.T) {
	ts, _ := kubeletFixture(t)
	grant(t, ts, "pod-reader", rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}})
	grant(t, ts, "log-reader", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}})
	reader := clientAs(t, ts, "pod-reader")
	logReader := clientAs(t, ts, "log-reader")
	eventually(t, "pod-reader reads pods", func() error {
		_, err := reader.CoreV1().Pods("default").Get(ctx(t), "one", metav1.GetOptions{})
		return err
	})
	eventually(t, "log-reader reads logs", func() error {
		_, err := logs(ctx(t), logReader, "one", &corev1.PodLogOptions{})
		return err
	})
	_, err := logs(ctx(t), reader, "one", &corev1.PodLogOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot get resource "pods/log"`) {
		t.Errorf("pod-reader's logs: err = %v, want 403 on pods/log", err)
	}
}

// execIn runs command in pod over the WebSocket protocol client-go (and
// kubectl) use, with stdin attached when it is not empty, returning stdout.
// The fake kubelet answers stdin as cat would; without stdin its output may
// reach client-go before client-go can take it (see fakekubelet's exec), so
// a test that needs the output sends stdin.
func execIn(t *testing.T, cfg *rest.Config, client kubernetes.Interface, pod, stdin string, command ...string) (string, error) {
	t.Helper()
	return connectIn(t, cfg, client, false, pod, "exec", "", stdin, command...)
}

func TestPodExec(t *testing.T) {
	ts, k := kubeletFixture(t)
	out, err := execIn(t, ts.AdminConfig, ts.Client, "one", "hello world\n", "cat")
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	if out != "hello world\n" {
		t.Errorf("stdout = %q", out)
	}
	got := k.LastRequest()
	if got.Path != "/exec/default/one/c1" {
		t.Errorf("kubelet path = %s", got.Path)
	}
	q := got.Query()
	if strings.Join(q["command"], " ") != "cat" || q.Get("input") != "1" || q.Get("output") != "1" || q.Get("error") != "1" {
		t.Errorf("kubelet query = %s", got.RawQuery)
	}

	t.Run("no node", func(t *testing.T) {
		_, err := execIn(t, ts.AdminConfig, ts.Client, "pending", "", "true")
		if err == nil || !strings.Contains(err.Error(), "pod pending does not have a host assigned") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("needs create on pods/exec", func(t *testing.T) {
		grant(t, ts, "exec-getter",
			rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/exec"}})
		grant(t, ts, "exec-creator",
			rbacv1.PolicyRule{Verbs: []string{"get", "create"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/exec"}})
		cfg := func(cn string) (*rest.Config, kubernetes.Interface) {
			ca, err := certs.LoadCA(ts.PKIDir)
			if err != nil {
				t.Fatal(err)
			}
			kp, err := certs.IssueClientCert(ca, cn, nil)
			if err != nil {
				t.Fatal(err)
			}
			key, _ := kp.KeyPEM()
			c := rest.CopyConfig(ts.AdminConfig)
			c.TLSClientConfig.CertFile, c.TLSClientConfig.KeyFile = "", ""
			c.TLSClientConfig.CertData, c.TLSClientConfig.KeyData = kp.CertPEM(), key
			return c, kubernetes.NewForConfigOrDie(c)
		}
		creatorCfg, creator := cfg("exec-creator")
		eventually(t, "exec-creator execs", func() error {
			out, err := execIn(t, creatorCfg, creator, "one", "ok\n", "cat")
			if err == nil && out != "ok\n" {
				return errors.New("stdout " + out)
			}
			return err
		})
		getterCfg, getter := cfg("exec-getter")
		eventually(t, "exec-getter reads pods", func() error {
			_, err := getter.CoreV1().Pods("default").Get(ctx(t), "one", metav1.GetOptions{})
			return err
		})
		_, err := execIn(t, getterCfg, getter, "one", "", "echo", "no")
		if err == nil || !strings.Contains(err.Error(), "403") && !strings.Contains(strings.ToLower(err.Error()), "forbidden") {
			t.Errorf("exec-getter: err = %v, want forbidden", err)
		}
	})
}

// TestPodConnectNeedsUpgrade: exec without an upgrade is upstream's 400.
func TestPodConnectNeedsUpgrade(t *testing.T) {
	ts, _ := kubeletFixture(t)
	code, body := raw(t, ts, "POST", "/api/v1/namespaces/default/pods/one/exec?command=ls&stdout=true", "", nil)
	if code != 400 || !strings.Contains(status(t, body).Message, "Upgrade request required") {
		t.Errorf("exec without upgrade: %d %s", code, body)
	}
}
