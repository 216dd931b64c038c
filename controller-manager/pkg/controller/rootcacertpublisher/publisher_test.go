package rootcacertpublisher

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

const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func cm(data map[string]string, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: "ns", Annotations: annotations}, Data: data}
}

func TestSync(t *testing.T) {
	good := map[string]string{DescriptionAnnotation: Description}
	active := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
	now := metav1.Now()
	deleting := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", DeletionTimestamp: &now}}
	tests := []struct {
		name string
		objs []runtime.Object
		want string // "create", "update" or ""
	}{
		{name: "missing", objs: []runtime.Object{active}, want: "create"},
		{name: "current", objs: []runtime.Object{active, cm(map[string]string{DataKey: ca}, good)}},
		{name: "edited data", objs: []runtime.Object{active, cm(map[string]string{DataKey: "x", "extra": "y"}, good)}, want: "update"},
		{name: "annotation removed", objs: []runtime.Object{active, cm(map[string]string{DataKey: ca}, nil)}, want: "update"},
		{name: "namespace being deleted", objs: []runtime.Object{deleting}},
		{name: "no namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := NewController(client, f.Core().V1().Namespaces(), f.Core().V1().ConfigMaps(), nil, nil, Options{RootCA: []byte(ca)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.queue.ShutDown()
			for _, o := range tt.objs {
				switch o := o.(type) {
				case *corev1.Namespace:
					_ = f.Core().V1().Namespaces().Informer().GetIndexer().Add(o)
				case *corev1.ConfigMap:
					_ = f.Core().V1().ConfigMaps().Informer().GetIndexer().Add(o)
				}
			}
			if err := c.sync(context.Background(), "ns"); err != nil {
				t.Fatal(err)
			}
			var verbs []string
			var written *corev1.ConfigMap
			for _, a := range client.Actions() {
				switch a := a.(type) {
				case clienttesting.CreateActionImpl:
					verbs = append(verbs, "create")
					written = a.Object.(*corev1.ConfigMap)
				case clienttesting.UpdateActionImpl:
					verbs = append(verbs, "update")
					written = a.Object.(*corev1.ConfigMap)
				}
			}
			if tt.want == "" {
				if len(verbs) != 0 {
					t.Fatalf("writes %v, want none", verbs)
				}
				return
			}
			if len(verbs) != 1 || verbs[0] != tt.want {
				t.Fatalf("writes %v, want [%s]", verbs, tt.want)
			}
			if len(written.Data) != 1 || written.Data[DataKey] != ca || written.Annotations[DescriptionAnnotation] != Description {
				t.Errorf("written ConfigMap = %+v", written)
			}
		})
	}
}

func TestNoCA(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	if _, err := NewController(fake.NewClientset(), f.Core().V1().Namespaces(), f.Core().V1().ConfigMaps(), nil, nil, Options{}); err == nil {
		t.Error("NewController without a CA succeeded")
	}
}
