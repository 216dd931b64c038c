package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
)

// vapFixture is one API server shared by the policy tests; each test works
// in namespaces of its own, and its bindings select only those.
type vapFixture struct {
	ts       *testserver.TestServer
	auditLog string
}

func startVAP(t *testing.T) *vapFixture {
	path := filepath.Join(t.TempDir(), "audit.log")
	ts := start(t, func(o *server.Options) { o.AuditLogPath = path })
	return &vapFixture{ts: ts, auditLog: path}
}

func (f *vapFixture) namespace(t *testing.T, name string) {
	t.Helper()
	if _, err := f.ts.Client.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deployment(name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

// deploymentPolicy is a policy on Deployment creates and updates.
func deploymentPolicy(name string, validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}},
			},
			Validations: validations,
		},
	}
}

// binding binds policy in the namespace ns only.
func binding(name, policy, ns string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy,
			ValidationActions: actions,
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			},
		},
	}
}

func (f *vapFixture) install(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	c := f.ts.Client.AdmissionregistrationV1()
	if _, err := c.ValidatingAdmissionPolicies().Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the policy: %v", err)
	}
	if _, err := c.ValidatingAdmissionPolicyBindings().Create(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the binding: %v", err)
	}
}

// createUntilDenied creates d in ns until the policy, which reaches the
// plugin through its watch, refuses it; it returns the refusal.
func createUntilDenied(t *testing.T, c kubernetes.Interface, ns string, d *appsv1.Deployment) *apierrors.StatusError {
	t.Helper()
	var denied *apierrors.StatusError
	if err := waitFor(t, func() error {
		_, err := c.AppsV1().Deployments(ns).Create(ctx(t), d, metav1.CreateOptions{})
		if err == nil {
			_ = c.AppsV1().Deployments(ns).Delete(ctx(t), d.Name, metav1.DeleteOptions{})
			return errors.New("still allowed")
		}
		if !errors.As(err, &denied) {
			t.Fatalf("creating %s: %v", d.Name, err)
		}
		return nil
	}); err != nil {
		t.Fatalf("the policy never denied %s: %v", d.Name, err)
	}
	return denied
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	f := startVAP(t)
	t.Run("deny", f.testDeny)
	t.Run("warn", f.testWarn)
	t.Run("audit", f.testAudit)
	t.Run("params", f.testParams)
	t.Run("matchConditions", f.testMatchConditions)
	t.Run("failurePolicy", f.testFailurePolicy)
	t.Run("compileError", f.testCompileError)
	t.Run("served", f.testServed)
	t.Run("authorizer", f.testAuthorizer)
	t.Run("libraries", f.testLibraries)
}

// testLibraries: a policy calls the Kubernetes CEL libraries
// (k8s.io/apiserver/pkg/cel/library: URLs, quantities, named formats) and
// they decide as upstream's do.
func (f *vapFixture) testLibraries(t *testing.T) {
	c := f.ts.Client
	f.namespace(t, "vap-libraries")
	const endpoint = "example.com/endpoint"
	f.install(t, deploymentPolicy("libraries",
		admissionregistrationv1.Validation{Expression: "!has(object.metadata.annotations) || !('" + endpoint + "' in object.metadata.annotations) || " +
			"(isURL(object.metadata.annotations['" + endpoint + "']) && url(object.metadata.annotations['" + endpoint + "']).getScheme() == 'https')",
			Message: "the endpoint must be an https URL"},
		admissionregistrationv1.Validation{Expression: "object.spec.template.spec.containers.all(c, !has(c.resources.limits) || !('memory' in c.resources.limits) || " +
			"quantity(c.resources.limits.memory).compareTo(quantity('1Gi')) <= 0)", Message: "at most 1Gi of memory"},
		admissionregistrationv1.Validation{Expression: "!format.dns1123Label().validate(object.metadata.name).hasValue()"}),
		binding("libraries-binding", "libraries", "vap-libraries", admissionregistrationv1.Deny))

	bad := deployment("web", 1, nil)
	bad.Annotations = map[string]string{endpoint: "http://example.com/"}
	denied := createUntilDenied(t, c, "vap-libraries", bad)
	if !strings.Contains(denied.ErrStatus.Message, "the endpoint must be an https URL") {
		t.Errorf("http endpoint: %v", denied)
	}
	big := deployment("big", 1, nil)
	big.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
	if _, err := c.AppsV1().Deployments("vap-libraries").Create(ctx(t), big, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "at most 1Gi of memory") {
		t.Errorf("2Gi of memory: %v, want the quantity rule's refusal", err)
	}
	good := deployment("good", 1, nil)
	good.Annotations = map[string]string{endpoint: "https://example.com/"}
	good.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
	if _, err := c.AppsV1().Deployments("vap-libraries").Create(ctx(t), good, metav1.CreateOptions{}); err != nil {
		t.Errorf("an https endpoint and 512Mi: %v", err)
	}
}

func (f *vapFixture) testDeny(t *testing.T) {
	c := f.ts.Client
	f.namespace(t, "vap-deny")
	f.namespace(t, "vap-other")
	f.install(t, deploymentPolicy("replicas-limit", admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5"}),
		binding("replicas-limit-binding", "replicas-limit", "vap-deny", admissionregistrationv1.Deny))

	denied := createUntilDenied(t, c, "vap-deny", deployment("web", 6, nil))
	st := denied.ErrStatus
	wantCause := "ValidatingAdmissionPolicy 'replicas-limit' with binding 'replicas-limit-binding' denied request: failed expression: object.spec.replicas <= 5"
	if st.Code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid {
		t.Errorf("code %d reason %q, want 422 Invalid", st.Code, st.Reason)
	}
	if want := `deployments.apps "web" is forbidden: ` + wantCause; st.Message != want {
		t.Errorf("message\n got %q\nwant %q", st.Message, want)
	}
	if st.Details == nil || st.Details.Group != "apps" || st.Details.Kind != "deployments" || st.Details.Name != "web" ||
		len(st.Details.Causes) != 1 || st.Details.Causes[0].Message != wantCause {
		t.Errorf("details %+v", st.Details)
	}

	// 5 replicas pass; an update to 6 is refused too.
	d, err := c.AppsV1().Deployments("vap-deny").Create(ctx(t), deployment("web", 5, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("5 replicas: %v", err)
	}
	d.Spec.Replicas = ptr.To(int32(6))
	if _, err := c.AppsV1().Deployments("vap-deny").Update(ctx(t), d, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("update to 6 replicas: %v, want Invalid", err)
	}
	// The binding's namespaceSelector leaves other namespaces alone.
	if _, err := c.AppsV1().Deployments("vap-other").Create(ctx(t), deployment("web", 6, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("6 replicas in a namespace the binding does not select: %v", err)
	}
	// Without a binding the policy does nothing.
	if err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx(t), "replicas-limit-binding", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, func() error {
		_, err := c.AppsV1().Deployments("vap-deny").Create(ctx(t), deployment("web-after", 6, nil), metav1.CreateOptions{})
		return err
	}); err != nil {
		t.Errorf("still denied after the binding was deleted: %v", err)
	}
}

// warnings collects the Warning headers client-go receives.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

func (f *vapFixture) testWarn(t *testing.T) {
	f.namespace(t, "vap-warn")
	f.install(t, deploymentPolicy("replicas-warn", admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5", Message: "too many replicas"}),
		binding("replicas-warn-binding", "replicas-warn", "vap-warn", admissionregistrationv1.Warn))
	cfg := rest.CopyConfig(f.ts.AdminConfig)
	w := &warnings{}
	cfg.WarningHandler = w
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := "Validation failed for ValidatingAdmissionPolicy 'replicas-warn' with binding 'replicas-warn-binding': too many replicas"
	i := 0
	if err := waitFor(t, func() error {
		i++
		name := fmt.Sprintf("web-%d", i)
		if _, err := c.AppsV1().Deployments("vap-warn").Create(ctx(t), deployment(name, 6, nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("a Warn binding must not deny: %v", err)
		}
		got := w.take()
		if len(got) != 1 || got[0] != want {
			return fmt.Errorf("warnings %q, want [%q]", got, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppsV1().Deployments("vap-warn").Create(ctx(t), deployment("small", 2, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w.take(); len(got) != 0 {
		t.Errorf("warnings for a passing object: %q", got)
	}
}

func (f *vapFixture) testAudit(t *testing.T) {
	f.namespace(t, "vap-audit")
	f.install(t, deploymentPolicy("replicas-audit", admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5"}),
		binding("replicas-audit-binding", "replicas-audit", "vap-audit", admissionregistrationv1.Audit))
	c := f.ts.Client
	i := 0
	if err := waitFor(t, func() error {
		i++
		name := fmt.Sprintf("audited-%d", i)
		if _, err := c.AppsV1().Deployments("vap-audit").Create(ctx(t), deployment(name, 6, nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("an Audit binding must not deny: %v", err)
		}
		data, err := os.ReadFile(f.auditLog)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(data), "\n") {
			var ev struct {
				Verb        string
				ObjectRef   *struct{ Name string }
				Annotations map[string]string
			}
			if l == "" || json.Unmarshal([]byte(l), &ev) != nil || ev.ObjectRef == nil || ev.ObjectRef.Name != "" || !strings.Contains(l, "vap-audit") {
				continue
			}
			v := ev.Annotations["validation.policy.admission.k8s.io/validation_failure"]
			var failures []map[string]any
			if err := json.Unmarshal([]byte(v), &failures); err != nil || len(failures) != 1 {
				continue
			}
			got := failures[0]
			if got["policy"] == "replicas-audit" && got["binding"] == "replicas-audit-binding" &&
				got["message"] == "failed expression: object.spec.replicas <= 5" && got["expressionIndex"] == float64(0) {
				return nil
			}
		}
		return errors.New("no audit line with the validation failure annotation yet")
	}); err != nil {
		t.Fatal(err)
	}
}

func (f *vapFixture) testParams(t *testing.T) {
	c := f.ts.Client
	f.namespace(t, "vap-params")
	p := deploymentPolicy("replicas-param", admissionregistrationv1.Validation{
		Expression:        "object.spec.replicas <= int(params.data.maxReplicas)",
		MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas, got ' + string(object.spec.replicas)",
	})
	p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	b := binding("replicas-param-binding", "replicas-param", "vap-params", admissionregistrationv1.Deny)
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
	f.install(t, p, b)

	// No ConfigMap yet, and parameterNotFoundAction Deny.
	denied := createUntilDenied(t, c, "vap-params", deployment("web", 1, nil))
	if want := "ValidatingAdmissionPolicy 'replicas-param' with binding 'replicas-param-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"; !strings.HasSuffix(denied.ErrStatus.Message, want) {
		t.Errorf("without params: %q, want suffix %q", denied.ErrStatus.Message, want)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"maxReplicas": "3"}}
	if _, err := c.CoreV1().ConfigMaps("vap-params").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last error
	if err := waitFor(t, func() error {
		_, last = c.AppsV1().Deployments("vap-params").Create(ctx(t), deployment("web", 4, nil), metav1.CreateOptions{})
		if last != nil && strings.Contains(last.Error(), "at most 3 replicas, got 4") {
			return nil
		}
		if last == nil {
			t.Fatal("4 replicas allowed with maxReplicas 3")
		}
		return last
	}); err != nil {
		t.Fatalf("the ConfigMap's limit was not applied: %v", err)
	}
	if _, err := c.AppsV1().Deployments("vap-params").Create(ctx(t), deployment("web", 3, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("3 replicas with maxReplicas 3: %v", err)
	}
}

func (f *vapFixture) testMatchConditions(t *testing.T) {
	c := f.ts.Client
	f.namespace(t, "vap-conditions")
	p := deploymentPolicy("replicas-conditions", admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5"})
	p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{
		{Name: "labelled", Expression: "has(object.metadata.labels) && 'enforce' in object.metadata.labels"},
		{Name: "not-admin", Expression: "request.userInfo.username != 'nobody'"},
	}
	f.install(t, p, binding("replicas-conditions-binding", "replicas-conditions", "vap-conditions", admissionregistrationv1.Deny))
	createUntilDenied(t, c, "vap-conditions", deployment("labelled", 6, map[string]string{"enforce": "yes"}))
	if _, err := c.AppsV1().Deployments("vap-conditions").Create(ctx(t), deployment("unlabelled", 6, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("a request the matchConditions exclude was denied: %v", err)
	}
}

func (f *vapFixture) testFailurePolicy(t *testing.T) {
	c := f.ts.Client
	f.namespace(t, "vap-fail")
	f.namespace(t, "vap-ignore")
	broken := admissionregistrationv1.Validation{Expression: "object.spec.noSuchField == 1"}
	f.install(t, deploymentPolicy("broken-fail", broken), binding("broken-fail-binding", "broken-fail", "vap-fail", admissionregistrationv1.Deny))
	denied := createUntilDenied(t, c, "vap-fail", deployment("web", 1, nil))
	if want := "denied request: expression 'object.spec.noSuchField == 1' resulted in error: no such key: noSuchField"; !strings.HasSuffix(denied.ErrStatus.Message, want) {
		t.Errorf("failurePolicy Fail: %q, want suffix %q", denied.ErrStatus.Message, want)
	}

	ignore := deploymentPolicy("broken-ignore", broken, admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5"})
	ignore.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	f.install(t, ignore, binding("broken-ignore-binding", "broken-ignore", "vap-ignore", admissionregistrationv1.Deny))
	// The second validation proves the policy is in force; the broken first
	// one is ignored.
	denied = createUntilDenied(t, c, "vap-ignore", deployment("web", 6, nil))
	if !strings.HasSuffix(denied.ErrStatus.Message, "failed expression: object.spec.replicas <= 5") {
		t.Errorf("failurePolicy Ignore denied for %q", denied.ErrStatus.Message)
	}
	if _, err := c.AppsV1().Deployments("vap-ignore").Create(ctx(t), deployment("web", 1, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("failurePolicy Ignore: %v", err)
	}
}

func (f *vapFixture) testCompileError(t *testing.T) {
	c := f.ts.Client.AdmissionregistrationV1()
	p := deploymentPolicy("does-not-compile", admissionregistrationv1.Validation{Expression: "object.spec.replicas <="})
	_, err := c.ValidatingAdmissionPolicies().Create(ctx(t), p, metav1.CreateOptions{})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != http.StatusUnprocessableEntity {
		t.Fatalf("create: %v, want 422", err)
	}
	found := false
	for _, cause := range se.ErrStatus.Details.Causes {
		if cause.Field == "spec.validations[0].expression" && strings.Contains(cause.Message, "compilation failed: ERROR: <input>:1:") {
			found = true
		}
	}
	if !found {
		t.Errorf("no cause at spec.validations[0].expression with the CEL error: %+v", se.ErrStatus.Details.Causes)
	}
	// Deny and Warn together are refused, as upstream.
	b := binding("deny-and-warn", "any", "x", admissionregistrationv1.Deny, admissionregistrationv1.Warn)
	if _, err := c.ValidatingAdmissionPolicyBindings().Create(ctx(t), b, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "must not contain both Deny and Warn") {
		t.Errorf("Deny and Warn: %v", err)
	}
	// Defaults as upstream.
	ok := deploymentPolicy("defaults", admissionregistrationv1.Validation{Expression: "true"})
	got, err := c.ValidatingAdmissionPolicies().Create(ctx(t), ok, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := got.Spec.MatchConstraints
	if got.Spec.FailurePolicy == nil || *got.Spec.FailurePolicy != admissionregistrationv1.Fail ||
		m.MatchPolicy == nil || *m.MatchPolicy != admissionregistrationv1.Equivalent || m.NamespaceSelector == nil || m.ObjectSelector == nil ||
		m.ResourceRules[0].Scope == nil || *m.ResourceRules[0].Scope != admissionregistrationv1.AllScopes || got.Generation != 1 {
		t.Errorf("defaults not applied: %+v", got.Spec)
	}
}

func (f *vapFixture) testServed(t *testing.T) {
	list, err := f.ts.Client.Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"validatingadmissionpolicies": false, "validatingadmissionpolicies/status": true, "validatingadmissionpolicybindings": false}
	for _, r := range list.APIResources {
		if namespaced, ok := want[r.Name]; ok {
			if r.Namespaced {
				t.Errorf("%s is namespaced", r.Name)
			}
			_ = namespaced
			delete(want, r.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("discovery lacks %v", want)
	}
	code, body := raw(t, f.ts, http.MethodGet, "/openapi/v3/apis/admissionregistration.k8s.io/v1", "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding") ||
		!strings.Contains(string(body), "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/{name}/status") {
		t.Errorf("OpenAPI v3 of admissionregistration.k8s.io/v1: %d, lacks the policy kinds or paths", code)
	}
}
