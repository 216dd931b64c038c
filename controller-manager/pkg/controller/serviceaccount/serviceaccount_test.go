package serviceaccount

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func namespace(name string, phase corev1.NamespacePhase) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
}

func TestSync(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		objs  []runtime.Object
		want  []string // created service accounts
	}{
		{name: "active namespace without one", objs: []runtime.Object{namespace("ns", corev1.NamespaceActive)}, want: []string{"default"}},
		{name: "already there", objs: []runtime.Object{namespace("ns", corev1.NamespaceActive),
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"}}}},
		{name: "terminating namespace", objs: []runtime.Object{namespace("ns", corev1.NamespaceTerminating)}},
		{name: "no namespace"},
		{name: "configured names", names: []string{"default", "builder"}, objs: []runtime.Object{namespace("ns", corev1.NamespaceActive),
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"}}}, want: []string{"builder"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := NewController(client, f.Core().V1().Namespaces(), f.Core().V1().ServiceAccounts(), nil, nil, Options{ServiceAccounts: tt.names})
			if err != nil {
				t.Fatal(err)
			}
			defer c.queue.ShutDown()
			for _, o := range tt.objs {
				switch o := o.(type) {
				case *corev1.Namespace:
					_ = f.Core().V1().Namespaces().Informer().GetIndexer().Add(o)
				case *corev1.ServiceAccount:
					_ = f.Core().V1().ServiceAccounts().Informer().GetIndexer().Add(o)
				}
			}
			if err := c.sync(context.Background(), "ns"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range client.Actions() {
				if cr, ok := a.(clienttesting.CreateActionImpl); ok {
					sa := cr.Object.(*corev1.ServiceAccount)
					if cr.Namespace != "ns" {
						t.Errorf("created in %q", cr.Namespace)
					}
					got = append(got, sa.Name)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("created %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("created %v, want %v", got, tt.want)
				}
			}
		})
	}
}
