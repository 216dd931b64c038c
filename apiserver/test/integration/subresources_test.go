package integration

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestCertificateSigningRequestApproval(t *testing.T) {
	ts := start(t, nil)
	csrs := ts.Client.CertificatesV1().CertificateSigningRequests()
	csr, err := csrs.Create(ctx(t), &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "node-csr"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t), SignerName: "kubernetes.io/kube-apiserver-client",
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}, Username: "forged"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if csr.Spec.Username == "forged" || csr.Spec.Username == "" {
		t.Errorf("spec.username = %q, want the requesting user", csr.Spec.Username)
	}
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}
	// Not through the main endpoint, not through /status.
	cur := csr.DeepCopy()
	cur.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved}
	if out, err := csrs.Update(ctx(t), cur, metav1.UpdateOptions{}); err != nil || len(out.Status.Conditions) != 0 {
		t.Errorf("main endpoint: %v, conditions %v", err, out.Status.Conditions)
	}
	cur, _ = csrs.Get(ctx(t), "node-csr", metav1.GetOptions{})
	cur.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved}
	if _, err := csrs.UpdateStatus(ctx(t), cur, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), `updates may not add a condition of type "Approved"`) {
		t.Errorf("approving through /status: %v", err)
	}
	cur, _ = csrs.Get(ctx(t), "node-csr", metav1.GetOptions{})
	cur.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved}
	out, err := csrs.UpdateApproval(ctx(t), "node-csr", cur, metav1.UpdateOptions{})
	if err != nil || len(out.Status.Conditions) != 1 || out.Status.Conditions[0].LastUpdateTime.IsZero() {
		t.Fatalf("approval: %v %+v", err, out)
	}
	out.Status.Conditions = append(out.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
	if _, err := csrs.UpdateApproval(ctx(t), "node-csr", out, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("approved and denied: %v, want 422", err)
	}
}

func TestScaleOfReplicationControllersAndStatefulSets(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "s"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	rcs := c.CoreV1().ReplicationControllers("default")
	if _, err := rcs.Create(ctx(t), &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](1), Template: tmpl}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := rcs.GetScale(ctx(t), "rc", metav1.GetOptions{})
	if err != nil || sc.Spec.Replicas != 1 || sc.Status.Selector != "app=s" {
		t.Fatalf("rc scale: %v %+v", err, sc)
	}
	sc.Spec.Replicas = 4
	if _, err := rcs.UpdateScale(ctx(t), "rc", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if rc, err := rcs.Get(ctx(t), "rc", metav1.GetOptions{}); err != nil || *rc.Spec.Replicas != 4 || rc.Generation != 2 {
		t.Errorf("rc after scale: %v replicas=%v generation=%d", err, rc.Spec.Replicas, rc.Generation)
	}
	sts := c.AppsV1().StatefulSets("default")
	if _, err := sts.Create(ctx(t), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "s"}}, Template: *tmpl}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ssc, err := sts.GetScale(ctx(t), "db", metav1.GetOptions{})
	if err != nil || ssc.Spec.Replicas != 1 {
		t.Fatalf("sts scale: %v %+v", err, ssc)
	}
	ssc.Spec.Replicas = 3
	if _, err := sts.UpdateScale(ctx(t), "db", ssc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, err := sts.Get(ctx(t), "db", metav1.GetOptions{}); err != nil || *s.Spec.Replicas != 3 {
		t.Errorf("sts after scale: %v %v", err, s.Spec.Replicas)
	}
}
