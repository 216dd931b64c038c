package integration

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func readyPod(name string) *corev1.Pod {
	p := testPod(name, "node-1")
	p.Labels = map[string]string{"app": "guarded"}
	return p
}

// An evicted pod is marked DisruptionTarget (EvictionByEvictionAPI) before
// it is deleted, as upstream's eviction: a pod kept by a finalizer shows
// the condition beside its deletion timestamp.
func TestEvictionMarksDisruptionTarget(t *testing.T) {
	ts := start(t, nil)
	pods := ts.Client.CoreV1().Pods("default")
	p := readyPod("marked")
	p.Finalizers = []string{"example.com/keep"}
	p, err := pods.Create(ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.EvictV1(ctx(t), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "marked", Namespace: "default"}}); err != nil {
		t.Fatalf("eviction: %v", err)
	}
	got, err := pods.Get(ctx(t), "marked", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.DeletionTimestamp == nil {
		t.Error("evicted pod has no deletion timestamp")
	}
	var cond *corev1.PodCondition
	for i := range got.Status.Conditions {
		if got.Status.Conditions[i].Type == corev1.DisruptionTarget {
			cond = &got.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "EvictionByEvictionAPI" || cond.LastTransitionTime.IsZero() {
		t.Errorf("DisruptionTarget condition = %+v", cond)
	}
	got.Finalizers = nil
	if _, err := pods.Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestEvictionHonoursDisruptionBudget(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	pods := c.CoreV1().Pods("default")
	for _, n := range []string{"a", "b"} {
		p, err := pods.Create(ctx(t), readyPod(n), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if _, err := pods.UpdateStatus(ctx(t), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pdbs := c.PolicyV1().PodDisruptionBudgets("default")
	pdb, err := pdbs.Create(ctx(t), &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guard"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What the disruption controller would write: one disruption allowed.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}
	if _, err := pdbs.UpdateStatus(ctx(t), pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	evict := func(name string) error {
		return pods.EvictV1(ctx(t), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}})
	}
	if err := evict("a"); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	if _, err := pods.Get(ctx(t), "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("evicted pod still there: %v", err)
	}
	got, err := pdbs.Get(ctx(t), "guard", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.DisruptionsAllowed != 0 {
		t.Errorf("disruptionsAllowed = %d, want 0", got.Status.DisruptionsAllowed)
	}
	if _, ok := got.Status.DisruptedPods["a"]; !ok {
		t.Errorf("disruptedPods = %v, want a", got.Status.DisruptedPods)
	}
	err = evict("b")
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("second eviction: %v, want 429", err)
	}
	if _, err := pods.Get(ctx(t), "b", metav1.GetOptions{}); err != nil {
		t.Errorf("pod b went despite the budget: %v", err)
	}
}

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

func TestTokenReview(t *testing.T) {
	ts := start(t, nil)
	reviews := ts.Client.AuthenticationV1().TokenReviews()
	got, err := reviews.Create(ctx(t), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "test-user-token"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Status.Authenticated || got.Status.User.Username != "test-user" || got.Status.User.UID != "uid-2" {
		t.Errorf("status = %+v", got.Status)
	}
	got, err = reviews.Create(ctx(t), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "bogus"}}, metav1.CreateOptions{})
	if err != nil || got.Status.Authenticated || got.Status.Error == "" {
		t.Errorf("bogus token: %v %+v", err, got.Status)
	}
	// A service account token issued by this server.
	if _, err := ts.Client.CoreV1().ServiceAccounts("default").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := ts.Client.CoreV1().ServiceAccounts("default").CreateToken(ctx(t), "bot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err = reviews.Create(ctx(t), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	if err != nil || !got.Status.Authenticated || got.Status.User.Username != "system:serviceaccount:default:bot" {
		t.Errorf("service account token: %v %+v", err, got.Status)
	}
	if _, err := reviews.Create(ctx(t), &authenticationv1.TokenReview{}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("empty token: %v, want 422", err)
	}
}

func TestEventsShareStorage(t *testing.T) {
	ts := start(t, nil)
	c := ts.Client
	now := metav1.NowMicro()
	_, err := c.EventsV1().Events("default").Create(ctx(t), &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1"},
		EventTime: now, ReportingController: "skiff.dev/test", ReportingInstance: "i", Action: "Test", Reason: "Tested",
		Note: "hello", Type: "Normal", Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core, err := c.CoreV1().Events("default").Get(ctx(t), "e1", metav1.GetOptions{})
	if err != nil || core.Message != "hello" || core.InvolvedObject.Name != "p" || core.ReportingController != "skiff.dev/test" {
		t.Fatalf("the core view: %v %+v", err, core)
	}
	core.Message = "changed"
	if _, err := c.CoreV1().Events("default").Update(ctx(t), core, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := c.EventsV1().Events("default").Get(ctx(t), "e1", metav1.GetOptions{})
	if err != nil || ev.Note != "changed" {
		t.Fatalf("the events.k8s.io view: %v %+v", err, ev)
	}
	list, err := c.EventsV1().Events("default").List(ctx(t), metav1.ListOptions{FieldSelector: "reason=Tested"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("list by field: %v %v", err, list)
	}
}

func TestImmutableConfigMapsAndSecrets(t *testing.T) {
	ts := start(t, nil)
	cms := ts.Client.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "frozen"}, Data: map[string]string{"a": "1"}, Immutable: ptr.To(true)}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["a"] = "2"
	_, err = cms.Update(ctx(t), cm, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "data: Forbidden: field is immutable when `immutable` is set") {
		t.Errorf("configmap data change: %v", err)
	}
	cm.Data["a"] = "1"
	cm.Labels = map[string]string{"metadata": "may-change"}
	if _, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Errorf("metadata change of an immutable configmap: %v", err)
	}
	secrets := ts.Client.CoreV1().Secrets("default")
	s, err := secrets.Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "frozen"}, Data: map[string][]byte{"a": []byte("1")}, Immutable: ptr.To(true)}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["a"] = []byte("2")
	_, err = secrets.Update(ctx(t), s, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "data: Forbidden: field is immutable when `immutable` is set") {
		t.Errorf("secret data change: %v", err)
	}
}

func TestDryRunOnEveryWrite(t *testing.T) {
	ts := start(t, nil)
	cms := ts.Client.CoreV1().ConfigMaps("default")
	dry := []string{metav1.DryRunAll}
	out, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{DryRun: dry})
	if err != nil || out.Name != "dry" || out.UID == "" {
		t.Fatalf("dry create: %v %+v", err, out)
	}
	if _, err := cms.Get(ctx(t), "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a dry create stored the object: %v", err)
	}
	cm, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "real"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["a"] = "2"
	if out, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{DryRun: dry}); err != nil || out.Data["a"] != "2" {
		t.Errorf("dry update: %v %v", err, out)
	}
	if out, err := cms.Patch(ctx(t), "real", "application/merge-patch+json", []byte(`{"data":{"a":"3"}}`), metav1.PatchOptions{DryRun: dry}); err != nil || out.Data["a"] != "3" {
		t.Errorf("dry patch: %v %v", err, out)
	}
	if err := cms.Delete(ctx(t), "real", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Errorf("dry delete: %v", err)
	}
	if err := cms.DeleteCollection(ctx(t), metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{}); err != nil {
		t.Errorf("dry deletecollection: %v", err)
	}
	got, err := cms.Get(ctx(t), "real", metav1.GetOptions{})
	if err != nil || got.Data["a"] != "1" || got.ResourceVersion != cm.ResourceVersion {
		t.Errorf("after dry writes: %v %+v", err, got)
	}
	// Validation and admission still run.
	_, err = cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{DryRun: dry})
	if !apierrors.IsInvalid(err) {
		t.Errorf("invalid dry create: %v", err)
	}
	_, err = ts.Client.CoreV1().ConfigMaps("nowhere").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{DryRun: dry})
	if !apierrors.IsNotFound(err) {
		t.Errorf("dry create in a missing namespace: %v, want 404 from admission", err)
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
