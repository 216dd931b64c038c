package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/component-base/certs"
)

// webhookServer is a real HTTPS admission webhook on loopback.
type webhookServer struct {
	url      string
	caBundle []byte
}

func startWebhookServer(t *testing.T, handler func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse, delay time.Duration) *webhookServer {
	t.Helper()
	ca, err := certs.NewCA("webhook-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := certs.IssueServingCert(ca, "webhook", nil, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := kp.KeyPEM()
	cert, err := tls.X509KeyPair(kp.CertPEM(), key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		resp := handler(review.Request)
		resp.UID = review.Request.UID
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(w).Encode(&review)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &webhookServer{url: "https://" + l.Addr().String() + "/admit", caBundle: ca.CertPEM()}
}

func TestAdmissionWebhooks(t *testing.T) {
	ts := start(t, nil)
	c := context.Background()
	admin := ts.Client
	none := admissionregistrationv1.SideEffectClassNone
	podRules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}

	// A mutating webhook that injects a sidecar, as a service mesh does.
	injector := startWebhookServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		patch := `[{"op":"add","path":"/spec/containers/-","value":{"name":"sidecar","image":"proxy:1"}},{"op":"add","path":"/metadata/labels","value":{"injected":"yes"}}]`
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Patch: []byte(patch)}
	}, 0)
	denier := startWebhookServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var pod corev1.Pod
		_ = json.Unmarshal(req.Object.Raw, &pod)
		if pod.Annotations["deny"] == "true" {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "pods annotated deny=true are refused", Code: 403}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	}, 0)
	if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "meshed", Labels: map[string]string{"inject": "enabled"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(c, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "injector"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "inject.skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &injector.url, CABundle: injector.caBundle},
			Rules: podRules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"inject": "enabled"}},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(c, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "denier"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &denier.url, CABundle: denier.caBundle},
			Rules: podRules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// An invalid configuration is refused with its fields named.
	_, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(c, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{{Name: "short", Rules: podRules}},
	}, metav1.CreateOptions{})
	if code(err) != 422 || !strings.Contains(err.Error(), "webhooks[0].sideEffects") || !strings.Contains(err.Error(), "webhooks[0].clientConfig") {
		t.Errorf("invalid webhook configuration: %v, want 422 naming sideEffects and clientConfig", err)
	}

	var injected *corev1.Pod
	if err := waitFor(t, func() error {
		name := fmt.Sprintf("web-%d", time.Now().UnixNano())
		p, err := admin.CoreV1().Pods("meshed").Create(c, testPod(name, ""), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if len(p.Spec.Containers) != 2 {
			return fmt.Errorf("not injected yet: %d containers", len(p.Spec.Containers))
		}
		injected = p
		return nil
	}); err != nil {
		t.Fatalf("the mutating webhook never injected: %v", err)
	}
	sc := injected.Spec.Containers[1]
	if sc.Name != "sidecar" || sc.TerminationMessagePath != "/dev/termination-log" || injected.Labels["injected"] != "yes" {
		t.Errorf("injected pod: %+v labels %v (the sidecar must be defaulted and validated after the patch)", sc, injected.Labels)
	}
	plain, err := admin.CoreV1().Pods("default").Create(c, testPod("plain", ""), metav1.CreateOptions{})
	if err != nil || len(plain.Spec.Containers) != 1 {
		t.Errorf("namespaceSelector: a pod outside the labelled namespace was mutated: %v", err)
	}

	denied := testPod("refused", "")
	denied.Annotations = map[string]string{"deny": "true"}
	if err := waitFor(t, func() error {
		_, err := admin.CoreV1().Pods("default").Create(c, denied, metav1.CreateOptions{})
		if code(err) == 403 && strings.Contains(err.Error(), `admission webhook "deny.skiff.dev" denied the request: pods annotated deny=true are refused`) {
			return nil
		}
		if err == nil {
			_ = admin.CoreV1().Pods("default").Delete(c, "refused", metav1.DeleteOptions{})
		}
		return fmt.Errorf("got %v", err)
	}); err != nil {
		t.Fatalf("the validating webhook never refused: %v", err)
	}

	// failurePolicy: an unreachable webhook fails the request with Fail and
	// is skipped with Ignore; a slow one is cut at timeoutSeconds.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "https://" + l.Addr().String() + "/admit"
	l.Close()
	slow := startWebhookServer(t, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}, 10*time.Second)
	one := int32(1)
	for _, tc := range []struct {
		name   string
		url    string
		ca     []byte
		policy admissionregistrationv1.FailurePolicyType
		fail   bool
	}{
		{"dead-ignore", deadURL, nil, admissionregistrationv1.Ignore, false},
		{"dead-fail", deadURL, nil, admissionregistrationv1.Fail, true},
		{"slow-fail", slow.url, slow.caBundle, admissionregistrationv1.Fail, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := "fp-" + tc.name
			if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"fp": tc.name}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			policy := tc.policy
			if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(c, &admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: ns},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{
					Name: tc.name + ".skiff.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &tc.url, CABundle: tc.ca},
					Rules: podRules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: &policy, TimeoutSeconds: &one,
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fp": tc.name}},
				}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			err := waitFor(t, func() error {
				start := time.Now()
				_, err := admin.CoreV1().Pods(ns).Create(c, testPod(fmt.Sprintf("p-%d", time.Now().UnixNano()), ""), metav1.CreateOptions{})
				if !tc.fail {
					return err
				}
				if code(err) == 500 && strings.Contains(err.Error(), "failed calling webhook") {
					if time.Since(start) > 5*time.Second {
						t.Errorf("the webhook call was not cut at its 1s timeout: %v", time.Since(start))
					}
					return nil
				}
				return fmt.Errorf("got %v", err)
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
