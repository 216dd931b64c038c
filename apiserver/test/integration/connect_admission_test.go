package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// reviews records the AdmissionRequests a webhook received.
type reviews struct {
	mu   sync.Mutex
	reqs []*admissionv1.AdmissionRequest
}

func (r *reviews) add(req *admissionv1.AdmissionRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
}

// last is the last request received for pod name and subresource sub.
func (r *reviews) last(name, sub string) *admissionv1.AdmissionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.reqs) - 1; i >= 0; i-- {
		if r.reqs[i].Name == name && r.reqs[i].SubResource == sub {
			return r.reqs[i]
		}
	}
	return nil
}

func (r *reviews) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// connectIn opens pods/{pod}/{sub} (exec or attach) as kubectl does, over
// a WebSocket, or over SPDY when spdy is set, with stdin attached when it
// is not empty, and returns stdout.
func connectIn(t *testing.T, cfg *rest.Config, client kubernetes.Interface, spdy bool, pod, sub, container, stdin string, command ...string) (string, error) {
	t.Helper()
	req := client.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(pod).SubResource(sub)
	if sub == "exec" {
		req = req.VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdin: stdin != "", Stdout: true, Stderr: true}, scheme.ParameterCodec)
	} else {
		req = req.VersionedParams(&corev1.PodAttachOptions{Container: container, Stdin: stdin != "", Stdout: true, Stderr: true}, scheme.ParameterCodec)
	}
	var exec remotecommand.Executor
	var err error
	if spdy {
		exec, err = remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	} else {
		exec, err = remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	}
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	c, cancel := context.WithTimeout(ctx(t), 30*time.Second)
	defer cancel()
	opts := remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	err = exec.StreamWithContext(c, opts)
	return stdout.String(), err
}

// Admission of CONNECT requests, as upstream's conformance test "should be
// able to deny attaching pod" needs it: a validating webhook whose rule
// names CONNECT on pods/attach and pods/exec is called with the options
// as the object, and its denial is the client's answer (403, the
// webhook's message) before anything is upgraded or reaches the kubelet;
// what it allows is served, with what a mutating webhook changed; a rule
// on CREATE of the same subresources is not called.
func TestConnectAdmission(t *testing.T) {
	ts, k := kubeletFixture(t)
	c := ctx(t)
	admin := ts.Client
	none := admissionregistrationv1.SideEffectClassNone
	connectRule := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/attach", "pods/exec"}}}}
	}

	// The validating webhook refuses attach and exec into pod "one", as
	// upstream's agnhost refuses "to-be-attached-pod": it decodes the
	// options as agnhost does, which needs their kind.
	var validated, created, mutated reviews
	denier := startWebhookServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		validated.add(req)
		if req.Name != "one" {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		var into runtime.Object = &corev1.PodAttachOptions{}
		verb := "attaching to"
		if req.SubResource == "exec" {
			into, verb = &corev1.PodExecOptions{}, "exec into"
		}
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(req.Object.Raw, nil, into); err != nil {
			return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{err.Error()}}
		}
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf("%s pod '%s' is not allowed", verb, req.Name)}}
	}, 0)
	// A webhook on CREATE of the same subresources: CONNECT is not CREATE.
	createOnly := startWebhookServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		created.add(req)
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "a CREATE rule was called for " + string(req.Operation)}}
	}, 0)
	// A mutating webhook moves exec from container a to container b.
	mover := startWebhookServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		mutated.add(req)
		if req.SubResource != "exec" || !strings.Contains(string(req.Object.Raw), `"container":"a"`) {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Patch: []byte(`[{"op":"replace","path":"/container","value":"b"}]`)}
	}, 0)
	if _, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(c, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "move-exec"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "move-exec.skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &mover.url, CABundle: mover.caBundle},
			Rules: connectRule(admissionregistrationv1.Connect), SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(c, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-connect"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "deny-attaching-pod.skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &denier.url, CABundle: denier.caBundle},
				Rules: connectRule(admissionregistrationv1.Connect), SideEffects: &none, AdmissionReviewVersions: []string{"v1"}},
			{Name: "create-only.skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &createOnly.url, CABundle: createOnly.caBundle},
				Rules: connectRule(admissionregistrationv1.Create), SideEffects: &none, AdmissionReviewVersions: []string{"v1"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const attachDenied = `admission webhook "deny-attaching-pod.skiff.dev" denied the request: attaching to pod 'one' is not allowed`
	// The configurations reach the API server through its watch. The
	// denial is the Status upstream's ToStatusErr makes of the webhook's
	// result: its message, and 400 since the result (as agnhost's) names
	// no code of 400 or more. A request without an upgrade gets it too:
	// admission comes first.
	eventually(t, "the webhook denies attaching", func() error {
		err := admin.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("one").SubResource("attach").
			VersionedParams(&corev1.PodAttachOptions{Container: "c1", Stdin: true, Stdout: true}, scheme.ParameterCodec).Do(c).Error()
		if !apierrors.IsBadRequest(err) || err.Error() != attachDenied {
			return fmt.Errorf("got %v", err)
		}
		return nil
	})

	t.Run("the webhook saw CONNECT and the options", func(t *testing.T) {
		req := validated.last("one", "attach")
		if req == nil {
			t.Fatal("no review for attach")
		}
		if req.Operation != admissionv1.Connect || req.Namespace != "default" || req.UserInfo.Username == "" ||
			req.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "pods"}) ||
			req.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "PodAttachOptions"}) || len(req.OldObject.Raw) != 0 {
			t.Errorf("review: operation %s namespace %q user %q resource %v kind %v oldObject %s", req.Operation, req.Namespace,
				req.UserInfo.Username, req.Resource, req.Kind, req.OldObject.Raw)
		}
		var opts corev1.PodAttachOptions
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(req.Object.Raw, nil, &opts); err != nil {
			t.Fatalf("the object does not decode as upstream's webhooks decode it: %v: %s", err, req.Object.Raw)
		}
		if opts.Container != "c1" || !opts.Stdin || !opts.Stdout || opts.Stderr || opts.TTY {
			t.Errorf("object = %+v", opts)
		}
	})

	t.Run("attach refused before the upgrade", func(t *testing.T) {
		for _, spdy := range []bool{false, true} {
			_, err := connectIn(t, ts.AdminConfig, ts.Client, spdy, "one", "attach", "c1", "x\n")
			if err == nil || !strings.Contains(err.Error(), "attaching to pod 'one' is not allowed") {
				t.Errorf("attach (spdy %v): err = %v, want the webhook's message", spdy, err)
			}
		}
	})

	t.Run("exec refused", func(t *testing.T) {
		_, err := connectIn(t, ts.AdminConfig, ts.Client, false, "one", "exec", "", "x\n", "cat")
		if err == nil || !strings.Contains(err.Error(), `admission webhook "deny-attaching-pod.skiff.dev" denied the request: exec into pod 'one' is not allowed`) {
			t.Errorf("exec: err = %v", err)
		}
		req := validated.last("one", "exec")
		if req == nil || req.Kind.Kind != "PodExecOptions" {
			t.Fatalf("review = %+v", req)
		}
		var opts corev1.PodExecOptions
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(req.Object.Raw, nil, &opts); err != nil || strings.Join(opts.Command, " ") != "cat" || !opts.Stdin {
			t.Errorf("exec options %+v (%v)", opts, err)
		}
	})

	t.Run("nothing refused reached the kubelet", func(t *testing.T) {
		for _, u := range k.Requests() {
			if strings.Contains(u.Path, "/default/one/") {
				t.Errorf("the kubelet was asked for %s", u)
			}
		}
	})

	t.Run("allowed exec is served, as the mutating webhook left it", func(t *testing.T) {
		out, err := connectIn(t, ts.AdminConfig, ts.Client, false, "multi", "exec", "a", "hello\n", "cat")
		if err != nil || out != "hello\n" {
			t.Fatalf("exec: %q, %v", out, err)
		}
		if got := k.LastRequest(); got.Path != "/exec/default/multi/b" {
			t.Errorf("kubelet path = %s, want container b (the mutating webhook's)", got.Path)
		}
		if m := mutated.last("multi", "exec"); m == nil || m.Operation != admissionv1.Connect {
			t.Errorf("mutating review = %+v", m)
		}
		// The validating webhook runs after, and sees the mutated options.
		if v := validated.last("multi", "exec"); v == nil || !strings.Contains(string(v.Object.Raw), `"container":"b"`) {
			t.Errorf("validating review = %+v", v)
		}
	})

	t.Run("allowed attach reaches the kubelet", func(t *testing.T) {
		// The fake kubelet serves no attach; what matters is that the
		// request got past admission to it.
		_, _ = connectIn(t, ts.AdminConfig, ts.Client, false, "multi", "attach", "a", "x\n")
		if got := k.LastRequest(); got.Path != "/attach/default/multi/a" || got.Query().Get("input") != "1" {
			t.Errorf("kubelet request = %v", got)
		}
	})

	t.Run("a CREATE rule is not called for CONNECT", func(t *testing.T) {
		if n := created.count(); n != 0 {
			t.Errorf("the CREATE webhook was called %d times", n)
		}
	})

	t.Run("kubectl attach prints the denial", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
			t.Skip("no kubectl at /usr/bin/kubectl")
		}
		out, code := kubectl(t, c, ts, "attach", "--namespace=default", "one", "-i", "-c=c1")
		if code == 0 || !strings.Contains(out, "attaching to pod 'one' is not allowed") {
			t.Errorf("kubectl attach: exit %d:\n%s", code, out)
		}
	})

	t.Run("dryRun is refused", func(t *testing.T) {
		err := admin.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/default/pods/multi/exec").
			Param("command", "true").Param("dryRun", "All").Do(c).Error()
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "dryRun is not supported") {
			t.Errorf("err = %v, want 400 dryRun is not supported", err)
		}
	})
}
