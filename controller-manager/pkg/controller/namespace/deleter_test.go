package namespace

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
)

var allVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func resources() []*metav1.APIResourceList {
	return []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "Pod", Verbs: allVerbs},
			{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get", "update"}},
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: allVerbs},
			// No deletecollection: deleted one by one.
			{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: metav1.Verbs{"delete", "get", "list"}},
			// Cannot be deleted: left alone.
			{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
			{Name: "nodes", Namespaced: false, Kind: "Node", Verbs: allVerbs},
		}},
	}
}

func meta(apiVersion, kind, name string, finalizers ...string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Finalizers: finalizers}}
}

type harness struct {
	d        *Deleter
	client   *fake.Clientset
	metadata *metadatafake.FakeMetadataClient
}

func newHarness(t *testing.T, pods []*corev1.Pod, objs ...*metav1.PartialObjectMetadata) *harness {
	t.Helper()
	now := metav1.Now()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", DeletionTimestamp: &now},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	typed := []runtime.Object{ns}
	for _, p := range pods {
		typed = append(typed, p)
	}
	client := fake.NewClientset(typed...)
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = resources()
	client.PrependReactor("create", "namespaces", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "finalize" {
			return false, nil, nil
		}
		return true, a.(clienttesting.CreateAction).GetObject(), nil
	})
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var rt []runtime.Object
	for _, o := range objs {
		rt = append(rt, o)
	}
	md := metadatafake.NewSimpleMetadataClient(scheme, rt...)
	// DELETE on a collection removes the items without finalizers.
	md.PrependReactor("delete-collection", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		gvr := a.GetResource()
		list, err := md.Tracker().List(gvr, schema.GroupVersionKind{Group: "fake-metadata-client-group", Version: "v1", Kind: ""}, a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		for _, item := range list.(*metav1.List).Items {
			m := item.Object.(*metav1.PartialObjectMetadata)
			if len(m.Finalizers) == 0 {
				if err := md.Tracker().Delete(gvr, m.Namespace, m.Name); err != nil {
					return true, nil, err
				}
			}
		}
		return true, nil, nil
	})
	d := NewDeleter(client.CoreV1().Namespaces(), md, client.Discovery()).withPods(client.CoreV1().Pods)
	return &harness{d: d, client: client, metadata: md}
}

func (h *harness) metadataActions() []string {
	var out []string
	for _, a := range h.metadata.Actions() {
		if a.GetVerb() == "list" {
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			s += " " + d.Name
		}
		out = append(out, s)
	}
	return out
}

func (h *harness) finalized() bool {
	for _, a := range h.client.Actions() {
		// The fake sends namespaces/finalize as a create.
		if u, ok := a.(clienttesting.CreateActionImpl); ok && u.Subresource == "finalize" {
			ns := u.Object.(*corev1.Namespace)
			return len(ns.Spec.Finalizers) == 0
		}
	}
	return false
}

func (h *harness) condition(t corev1.NamespaceConditionType) corev1.NamespaceCondition {
	ns, _ := h.client.CoreV1().Namespaces().Get(context.Background(), "ns", metav1.GetOptions{})
	for _, c := range ns.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.NamespaceCondition{}
}

func TestDeleteAllContentThenFinalize(t *testing.T) {
	h := newHarness(t, nil, meta("v1", "ConfigMap", "cm1"), meta("v1", "ConfigMap", "cm2"), meta("v1", "Secret", "s1"))
	if err := h.d.Delete(context.Background(), "ns"); err != nil {
		t.Fatal(err)
	}
	want := []string{"delete-collection configmaps", "delete-collection pods", "delete secrets s1"}
	got := h.metadataActions()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("metadata writes = %v, want %v", got, want)
	}
	if !h.finalized() {
		t.Error("the namespace was not finalized")
	}
	if c := h.condition(corev1.NamespaceContentRemaining); c.Status != corev1.ConditionFalse || c.Reason != "ContentRemoved" {
		t.Errorf("NamespaceContentRemaining = %+v", c)
	}
}

func TestContentWithFinalizersKeepsTheNamespace(t *testing.T) {
	h := newHarness(t, nil, meta("v1", "ConfigMap", "held", "example.com/hold"))
	err := h.d.Delete(context.Background(), "ns")
	var remaining *ResourcesRemainingError
	if !errors.As(err, &remaining) || remaining.Estimate != finalizerEstimateSeconds {
		t.Fatalf("Delete = %v, want a ResourcesRemainingError of %ds", err, finalizerEstimateSeconds)
	}
	if h.finalized() {
		t.Error("finalized with content left")
	}
	c := h.condition(corev1.NamespaceContentRemaining)
	if c.Status != corev1.ConditionTrue || c.Reason != "SomeResourcesRemain" || c.Message != "Some resources are remaining: configmaps has 1 resource instances" {
		t.Errorf("NamespaceContentRemaining = %+v", c)
	}
	c = h.condition(corev1.NamespaceFinalizersRemaining)
	if c.Status != corev1.ConditionTrue || c.Message != "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances" {
		t.Errorf("NamespaceFinalizersRemaining = %+v", c)
	}
	if c := h.condition(corev1.NamespaceDeletionDiscoveryFailure); c.Status != corev1.ConditionFalse || c.Reason != "ResourcesDiscovered" {
		t.Errorf("NamespaceDeletionDiscoveryFailure = %+v", c)
	}
}

func TestGracefulPodsAreWaitedFor(t *testing.T) {
	grace := int64(30)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n", TerminationGracePeriodSeconds: &grace}}
	// The pod is still there after the collection delete (graceful): it
	// has a finalizer in the fake, standing for the grace period.
	h := newHarness(t, []*corev1.Pod{p}, meta("v1", "Pod", "p", "grace"))
	err := h.d.Delete(context.Background(), "ns")
	var remaining *ResourcesRemainingError
	if !errors.As(err, &remaining) || remaining.Estimate != 30 {
		t.Fatalf("Delete = %v, want a ResourcesRemainingError of 30s", err)
	}
	if h.finalized() {
		t.Error("finalized while a pod terminates")
	}
}

func TestDeleteFailureIsReported(t *testing.T) {
	h := newHarness(t, nil, meta("v1", "Secret", "s1"))
	h.metadata.PrependReactor("delete", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("boom")
	})
	if err := h.d.Delete(context.Background(), "ns"); err == nil {
		t.Fatal("Delete succeeded despite a failing deletion")
	}
	if h.finalized() {
		t.Error("finalized despite a failure")
	}
	if c := h.condition(corev1.NamespaceDeletionContentFailure); c.Status != corev1.ConditionTrue || c.Reason != "ContentDeletionFailed" {
		t.Errorf("NamespaceDeletionContentFailure = %+v", c)
	}
}

func TestNotDeletingIsLeftAlone(t *testing.T) {
	h := newHarness(t, nil)
	ns, _ := h.client.CoreV1().Namespaces().Get(context.Background(), "ns", metav1.GetOptions{})
	ns.DeletionTimestamp = nil
	if _, err := h.client.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.d.Delete(context.Background(), "ns"); err != nil {
		t.Fatal(err)
	}
	if len(h.metadataActions()) != 0 || h.finalized() {
		t.Error("a namespace not being deleted was emptied or finalized")
	}
}
