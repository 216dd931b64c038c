package bootstrap

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	jws "k8s.io/cluster-bootstrap/token/jws"
)

var now = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func token(id, secret string, expiration time.Time, signing bool) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system", UID: "uid-" + "id"},
		Type:       "bootstrap.kubernetes.io/token",
		Data:       map[string][]byte{"token-id": []byte(id), "token-secret": []byte(secret), "usage-bootstrap-authentication": []byte("true")},
	}
	if !expiration.IsZero() {
		s.Data["expiration"] = []byte(expiration.Format(time.RFC3339))
	}
	if signing {
		s.Data["usage-bootstrap-signing"] = []byte("true")
	}
	return s
}

func TestTokenCleaner(t *testing.T) {
	tests := []struct {
		name       string
		secret     *corev1.Secret
		wantDelete bool
	}{
		{name: "expired", secret: token("abcdef", "0123456789abcdef", now.Add(-time.Second), false), wantDelete: true},
		{name: "not yet expired", secret: token("abcdef", "0123456789abcdef", now.Add(time.Hour), false)},
		{name: "no expiration", secret: token("abcdef", "0123456789abcdef", time.Time{}, false)},
		{name: "not a bootstrap token", secret: func() *corev1.Secret {
			s := token("abcdef", "0123456789abcdef", now.Add(-time.Hour), false)
			s.Type = corev1.SecretTypeOpaque
			return s
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.secret)
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := NewTokenCleaner(client, f.Core().V1().Secrets(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.queue.ShutDown()
			c.now = func() time.Time { return now }
			_ = f.Core().V1().Secrets().Informer().GetIndexer().Add(tt.secret)
			if err := c.sync(context.Background(), "kube-system/"+tt.secret.Name); err != nil {
				t.Fatal(err)
			}
			deleted := false
			for _, a := range client.Actions() {
				if a.GetVerb() == "delete" && a.(clienttesting.DeleteAction).GetName() == tt.secret.Name {
					deleted = true
				}
			}
			if deleted != tt.wantDelete {
				t.Errorf("deleted = %v, want %v", deleted, tt.wantDelete)
			}
		})
	}
}

func TestBootstrapSigner(t *testing.T) {
	const kubeconfig = "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://192.0.2.1:6443\n  name: \"\"\n"
	info := func(extra map[string]string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster-info", Namespace: "kube-public"}, Data: map[string]string{"kubeconfig": kubeconfig}}
		for k, v := range extra {
			cm.Data[k] = v
		}
		return cm
	}
	goodSig, err := jws.ComputeDetachedSignature(kubeconfig, "abcdef", "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		objs    []runtime.Object
		want    map[string]string // the signature keys after; nil: no update
		updated bool
	}{
		{name: "signs with a signing token", objs: []runtime.Object{info(nil), token("abcdef", "0123456789abcdef", now.Add(time.Hour), true)},
			updated: true, want: map[string]string{"jws-kubeconfig-abcdef": goodSig}},
		{name: "already signed", objs: []runtime.Object{info(map[string]string{"jws-kubeconfig-abcdef": goodSig}), token("abcdef", "0123456789abcdef", now.Add(time.Hour), true)}},
		{name: "removes an expired token's signature", objs: []runtime.Object{info(map[string]string{"jws-kubeconfig-abcdef": goodSig}), token("abcdef", "0123456789abcdef", now.Add(-time.Hour), true)},
			updated: true, want: map[string]string{}},
		{name: "not a signing token", objs: []runtime.Object{info(nil), token("abcdef", "0123456789abcdef", now.Add(time.Hour), false)}},
		{name: "no cluster-info", objs: []runtime.Object{token("abcdef", "0123456789abcdef", now.Add(time.Hour), true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			s, err := NewSigner(client, f.Core().V1().Secrets(), f.Core().V1().ConfigMaps(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.queue.ShutDown()
			s.now = func() time.Time { return now }
			for _, o := range tt.objs {
				switch o := o.(type) {
				case *corev1.Secret:
					_ = f.Core().V1().Secrets().Informer().GetIndexer().Add(o)
				case *corev1.ConfigMap:
					_ = f.Core().V1().ConfigMaps().Informer().GetIndexer().Add(o)
				}
			}
			if err := s.sync(context.Background(), signerKey); err != nil {
				t.Fatal(err)
			}
			var written *corev1.ConfigMap
			for _, a := range client.Actions() {
				if a.GetVerb() == "update" {
					written = a.(clienttesting.UpdateAction).GetObject().(*corev1.ConfigMap)
				}
			}
			if (written != nil) != tt.updated {
				t.Fatalf("updated = %v, want %v", written != nil, tt.updated)
			}
			if written == nil {
				return
			}
			if written.Data["kubeconfig"] != kubeconfig {
				t.Errorf("kubeconfig changed")
			}
			got := map[string]string{}
			for k, v := range written.Data {
				if k != "kubeconfig" {
					got[k] = v
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("signatures = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
				if !jws.DetachedTokenIsValid(got[k], kubeconfig, "abcdef", "0123456789abcdef") {
					t.Errorf("%s does not verify", k)
				}
			}
		})
	}
}
