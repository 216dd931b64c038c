package integration

import (
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

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
