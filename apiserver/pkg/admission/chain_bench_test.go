package admission

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// cacheObjects answers as the server's watch cache does: Get returns the
// cached object itself, List a new slice of the cached objects. It counts
// the calls, which the benchmarks report per create (each is a watch cache
// read in the server, the costliest part of a plugin).
type cacheObjects struct {
	objs        map[string]map[string]runtime.Object // group/resource -> namespace/name
	gets, lists atomic.Int64
}

func newCacheObjects(objs ...runtime.Object) *cacheObjects {
	c := &cacheObjects{objs: map[string]map[string]runtime.Object{}}
	for _, o := range objs {
		g, r := resourceOf(o)
		m := o.(metav1.Object)
		if c.objs[g+"/"+r] == nil {
			c.objs[g+"/"+r] = map[string]runtime.Object{}
		}
		c.objs[g+"/"+r][m.GetNamespace()+"/"+m.GetName()] = o
	}
	return c
}

func (c *cacheObjects) Get(_ context.Context, group, res, ns, name string) (runtime.Object, error) {
	c.gets.Add(1)
	if o, ok := c.objs[group+"/"+res][ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: res}, name)
}

func (c *cacheObjects) List(_ context.Context, group, res, ns string) ([]runtime.Object, error) {
	c.lists.Add(1)
	var out []runtime.Object
	for _, o := range c.objs[group+"/"+res] {
		if ns == "" || o.(metav1.Object).GetNamespace() == ns {
			out = append(out, o)
		}
	}
	return out, nil
}

// update is a QuotaUpdater on the cached quota (a compare-and-swap that
// always wins).
func (c *cacheObjects) update(_ context.Context, ns, name string, fn func(*corev1.ResourceQuota) error) error {
	q := c.objs["/resourcequotas"][ns+"/"+name].(*corev1.ResourceQuota).DeepCopy()
	if err := fn(q); err != nil {
		return err
	}
	c.objs["/resourcequotas"][ns+"/"+name] = q
	return nil
}

// benchChain is the server's chain of the plugins this package has, in the
// server's order (pkg/server), the ValidatingAdmissionPolicy plugin left out
// (it has its own package).
func benchChain(objs *cacheObjects) Chain {
	ns := NewNamespaceLifecycle(func(context.Context, string) (*corev1.Namespace, error) {
		return nil, apierrors.NewNotFound(namespacesGR, "")
	})
	ns.Apply(watch.Event{Type: watch.Added, Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}})
	hooks := NewWebhooks(ns.Labels, nil)
	podSecurity, err := NewPodSecurity(PodSecurityConfig{Enforce: "baseline"}, ns.Labels, objs, nil)
	if err != nil {
		panic(err)
	}
	return Chain{
		ns,
		&LimitRanger{Objects: objs},
		&ServiceAccount{Objects: objs},
		podSecurity,
		&Priority{Objects: objs},
		&DefaultTolerationSeconds{Seconds: 300},
		&RuntimeClass{Objects: objs},
		MutatingWebhooks{Webhooks: hooks},
		ValidatingWebhooks{Webhooks: hooks},
		&ResourceQuota{Objects: objs, Update: objs.update},
	}
}

// benchPod is the chain bench's pod (test/bench/create.go), with a
// security context as most workloads set one.
func benchPod() *corev1.Pod {
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-000001", Namespace: "bench",
			Labels: map[string]string{"app": "bench", "tier": "web", "pod-template-hash": "7d9c8b5f4", "index": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "127.0.0.1:5000/busybox:1.36", Command: []string{"httpd", "-f", "-p", "8080"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no},
		}}},
	}
}

// BenchmarkAdmissionPodCreate runs a pod create through the chain (Admit,
// then Validate), in a namespace with no LimitRange and no ResourceQuota
// (the chain bench's) and in one with both. The pod is copied afresh for
// each create; "copy-only" is that copy alone, to subtract.
func BenchmarkAdmissionPodCreate(b *testing.B) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "bench"}}
	critical := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000}
	limits := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "bench"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Max:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
	}}}}
	hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1000000000"), corev1.ResourceRequestsCPU: resource.MustParse("1000000"),
		corev1.ResourceLimitsMemory: resource.MustParse("1000Ei")}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "quota", Namespace: "bench"}, Spec: corev1.ResourceQuotaSpec{Hard: hard},
		Status: corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0"),
			corev1.ResourceRequestsCPU: resource.MustParse("0"), corev1.ResourceLimitsMemory: resource.MustParse("0")}}}
	template := benchPod()
	b.Run("copy-only", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = template.DeepCopy()
		}
	})
	for _, tc := range []struct {
		name string
		objs []runtime.Object
	}{
		{"empty-namespace", []runtime.Object{sa, critical}},
		{"limitrange-and-quota", []runtime.Object{sa, critical, limits, quota}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			objs := newCacheObjects(tc.objs...)
			// As the server runs it (pkg/server compiles its chain).
			chain := benchChain(objs).Compile()
			ctx := context.Background()
			create := func() {
				pod := template.DeepCopy()
				a := &Attributes{Operation: Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
					Namespace: "bench", Name: pod.Name, Object: pod}
				if err := chain.Admit(ctx, a); err != nil {
					b.Fatal(err)
				}
				if err := chain.Validate(ctx, a); err != nil {
					b.Fatal(err)
				}
			}
			create()
			objs.gets.Store(0)
			objs.lists.Store(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				create()
			}
			b.StopTimer()
			b.ReportMetric(float64(objs.lists.Load())/float64(b.N), "lists/op")
			b.ReportMetric(float64(objs.gets.Load())/float64(b.N), "gets/op")
		})
	}
}
