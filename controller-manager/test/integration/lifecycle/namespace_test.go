package lifecycle

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/controller-manager/pkg/controller/namespace"
)

func TestNamespaceDeletionDeletesContentThenNamespace(t *testing.T) {
	e := start(t)
	nc, err := namespace.NewController(e.client, e.metadata, e.client.Discovery(), e.informers.Core().V1().Namespaces(), e.recorder, nil, namespace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.run("namespace controller", nc.Run)
	const ns = "doomed"
	e.namespace(ns)
	e.namespace("kept")
	zero := int64(0)
	labels := map[string]string{"app": "x"}
	create := []func(ns string) error{
		func(ns string) error {
			_, err := e.client.CoreV1().ConfigMaps(ns).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
			return err
		},
		func(ns string) error {
			_, err := e.client.CoreV1().Secrets(ns).Create(e.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secret"}}, metav1.CreateOptions{})
			return err
		},
		func(ns string) error {
			_, err := e.client.CoreV1().Pods(ns).Create(e.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod"},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &zero, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
			return err
		},
		func(ns string) error {
			_, err := e.client.CoordinationV1().Leases(ns).Create(e.ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lease"}}, metav1.CreateOptions{})
			return err
		},
		func(ns string) error {
			one := int32(1)
			_, err := e.client.AppsV1().ReplicaSets(ns).Create(e.ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"},
				Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}, metav1.CreateOptions{})
			return err
		},
	}
	for _, n := range []string{ns, "kept"} {
		for _, c := range create {
			if err := c(n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.client.CoreV1().Namespaces().Delete(e.ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "the namespace to be deleted", func() (bool, error) {
		_, err := e.client.CoreV1().Namespaces().Get(e.ctx, ns, metav1.GetOptions{})
		if err == nil {
			return false, nil
		}
		return gone(err)
	})
	// Nothing is left of it (a namespace of that name could not be listed
	// otherwise: list across namespaces and filter).
	cms, _ := e.client.CoreV1().ConfigMaps("").List(e.ctx, metav1.ListOptions{})
	pods, _ := e.client.CoreV1().Pods("").List(e.ctx, metav1.ListOptions{})
	rss, _ := e.client.AppsV1().ReplicaSets("").List(e.ctx, metav1.ListOptions{})
	leases, _ := e.client.CoordinationV1().Leases("").List(e.ctx, metav1.ListOptions{})
	secrets, _ := e.client.CoreV1().Secrets("").List(e.ctx, metav1.ListOptions{})
	count := func(namespaces ...string) map[string]int {
		out := map[string]int{}
		for _, n := range namespaces {
			out[n]++
		}
		return out
	}
	var in []string
	for _, x := range cms.Items {
		in = append(in, x.Namespace)
	}
	for _, x := range pods.Items {
		in = append(in, x.Namespace)
	}
	for _, x := range rss.Items {
		in = append(in, x.Namespace)
	}
	for _, x := range leases.Items {
		in = append(in, x.Namespace)
	}
	for _, x := range secrets.Items {
		in = append(in, x.Namespace)
	}
	c := count(in...)
	if c[ns] != 0 {
		t.Errorf("%d objects are left in the deleted namespace", c[ns])
	}
	if c["kept"] < len(create) {
		t.Errorf("the other namespace lost objects: %d left, want at least %d", c["kept"], len(create))
	}
}
