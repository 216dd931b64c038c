package fieldmanager

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/registry"
)

func TestManagerName(t *testing.T) {
	cases := []struct{ fieldManager, userAgent, want string }{
		{"kubectl-client-side-apply", "kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd", "kubectl-client-side-apply"},
		{"", "kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd", "kubectl"},
		{"", "skiff-controller-manager/v0.1.0 (linux/amd64)/replicaset-controller", "skiff-controller-manager"},
		{"", "no-slash", "no-slash"},
		{"", "tab\there/1", "tabhere"},
		{"", strings.Repeat("é", 100) + "/1", strings.Repeat("é", 64)},
		{"", "", ""},
	}
	for _, c := range cases {
		if got := ManagerName(c.fieldManager, c.userAgent); got != c.want {
			t.Errorf("ManagerName(%q, %q) = %q, want %q", c.fieldManager, c.userAgent, got, c.want)
		}
	}
}

func TestResetFields(t *testing.T) {
	pod, cm := resourceOf(t, "", "pods"), resourceOf(t, "", "configmaps")
	cases := []struct {
		r        *registry.Resource
		sub      string
		reset    []string
		notReset []string
	}{
		{pod, "", []string{".status.phase"}, []string{".spec.nodeName", ".metadata.labels"}},
		{pod, "status", []string{".spec.nodeName", ".metadata.ownerReferences", ".metadata.deletionTimestamp"}, []string{".status.phase", ".metadata.labels"}},
		{cm, "", nil, []string{".data.a", ".metadata.labels"}},
	}
	for _, c := range cases {
		filters := resetFields(c.r, c.sub)
		f := filters[fieldpath.APIVersion("v1")]
		for _, p := range c.reset {
			if f == nil || !f.Filter(fieldpath.NewSet(fieldpath.MakePathOrDie(splitPath(p)...))).Empty() {
				t.Errorf("%s/%s: %s is not reset", c.r.Kind, c.sub, p)
			}
		}
		for _, p := range c.notReset {
			if f != nil && f.Filter(fieldpath.NewSet(fieldpath.MakePathOrDie(splitPath(p)...))).Empty() {
				t.Errorf("%s/%s: %s is reset", c.r.Kind, c.sub, p)
			}
		}
	}
}

func resourceOf(t testing.TB, group, name string) *registry.Resource {
	t.Helper()
	for _, r := range registry.Resources() {
		if r.Group == group && r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %s in group %q", name, group)
	return nil
}

func splitPath(p string) []interface{} {
	var out []interface{}
	for _, s := range strings.Split(strings.TrimPrefix(p, "."), ".") {
		out = append(out, s)
	}
	return out
}

func TestUnstructuredConverter(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "stable.example.com", Version: "v1beta1", Kind: "CronTab"})
	u.SetName("c")
	out, err := unstructuredConverter{}.ConvertToVersion(u, schema.GroupVersion{Group: "stable.example.com", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*unstructured.Unstructured); got.GetAPIVersion() != "stable.example.com/v1" || got.GetName() != "c" || u.GetAPIVersion() != "stable.example.com/v1beta1" {
		t.Errorf("converted %v from %v", got.Object, u.Object)
	}
	if _, err := (unstructuredConverter{}).ConvertToVersion(u, schema.GroupVersion{Group: "other.example.com", Version: "v1"}); err == nil {
		t.Error("converted to another group")
	}
	if _, err := (unstructuredConverter{}).ConvertToVersion(&corev1.Pod{}, schema.GroupVersion{Version: "v1"}); err == nil {
		t.Error("converted a typed object")
	}
}

// TestUpdateAndApplyOnBuiltin exercises a field manager of a built-in kind
// without a server: an update records its manager, an apply by another
// manager of a field the first owns conflicts.
func TestUpdateAndApplyOnBuiltin(t *testing.T) {
	codecs := api.NewCodecs()
	r := resourceOf(t, "", "configmaps")
	m := New(codecs.Scheme)
	fm, err := m.For(&registry.Store{R: r}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := m.For(&registry.Store{R: r}, "", nil); again != fm {
		t.Error("the manager is built again")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "d"}, Data: map[string]string{"a": "1"}}
	obj := fm.UpdateNoErrors(&corev1.ConfigMap{}, cm, "creator")
	got := obj.(*corev1.ConfigMap)
	if len(got.ManagedFields) != 1 || got.ManagedFields[0].Manager != "creator" || !strings.Contains(string(got.ManagedFields[0].FieldsV1.Raw), `"f:a"`) {
		t.Fatalf("managedFields after update: %+v", got.ManagedFields)
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "d"}, "data": map[string]any{"a": "2"},
	}}
	if err := fm.CheckApply(patch); err != nil {
		t.Fatal(err)
	}
	if _, err := fm.Apply(got, patch, "applier", false); err == nil || !strings.Contains(err.Error(), `conflict with "creator"`) {
		t.Errorf("apply over another manager's field: %v", err)
	}
	patch.Object["bogus"] = true
	if err := fm.CheckApply(patch); err == nil || !strings.Contains(err.Error(), "field not declared in schema") {
		t.Errorf("CheckApply of an undeclared field: %v", err)
	}
}

// BenchmarkCreatePod is the field manager's share of a pod create: the
// Update entry of the creating manager over an empty live object.
func BenchmarkCreatePod(b *testing.B) {
	fm, pod := benchPod(b)
	createBench(b, fm, pod)
}

func createBench(b *testing.B, fm *Manager, pod *corev1.Pod) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		obj := fm.UpdateNoErrors(&corev1.Pod{}, pod.DeepCopy(), "bench")
		if len(obj.(*corev1.Pod).ManagedFields) != 1 {
			b.Fatal("no managed fields")
		}
	}
}

// BenchmarkCreateAdmittedPod is BenchmarkCreatePod with what admission adds
// to that pod (admit).
func BenchmarkCreateAdmittedPod(b *testing.B) {
	fm, pod := benchPod(b)
	createBench(b, fm, admit(pod))
}

// BenchmarkCreateShortcut is BenchmarkCreatePod through Create.
func BenchmarkCreateShortcut(b *testing.B) {
	fm, pod := benchPod(b)
	shortcutBench(b, fm, pod)
}

// BenchmarkCreateAdmittedShortcut is BenchmarkCreateAdmittedPod through
// Create.
func BenchmarkCreateAdmittedShortcut(b *testing.B) {
	fm, pod := benchPod(b)
	shortcutBench(b, fm, admit(pod))
}

func shortcutBench(b *testing.B, fm *Manager, pod *corev1.Pod) {
	if _, ok := fm.create(&corev1.Pod{}, pod.DeepCopy(), "bench"); !ok {
		b.Fatal("Create takes the general path")
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		obj := fm.Create(&corev1.Pod{}, pod.DeepCopy(), "bench")
		if len(obj.(*corev1.Pod).ManagedFields) != 1 {
			b.Fatal("no managed fields")
		}
	}
}

// admit adds to pod what admission adds: the ServiceAccount plugin's
// projected kube-api-access volume and its mount, DefaultTolerationSeconds'
// two tolerations, the Priority plugin's priority and preemption policy.
func admit(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](420),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}})
	pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"})
	pod.Spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount = "default", "default"
	pod.Spec.Priority, pod.Spec.PreemptionPolicy = ptr.To[int32](0), ptr.To(corev1.PreemptLowerPriority)
	return pod
}

// benchPod is the pods' field manager and a pod as the API server stores
// it when created by test/bench: defaulted, with its requests.
func benchPod(b testing.TB) (*Manager, *corev1.Pod) {
	codecs := api.NewCodecs()
	pods := resourceOf(b, "", "pods")
	s := &registry.Store{R: pods}
	fm, err := New(codecs.Scheme).For(s, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "d", Labels: map[string]string{"app": "bench", "tier": "web", "track": "stable", "n": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
			}},
			Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
		}}},
	}
	s.Default(pod)
	return fm, pod
}

// TestEveryKindIsTyped: every built-in resource gets a field manager whose
// type converter knows its kind, for the object and each of its
// subresources that take writes.
func TestEveryKindIsTyped(t *testing.T) {
	m := New(api.NewCodecs().Scheme)
	for _, r := range registry.Resources() {
		subs := []string{""}
		if r.StatusStrategy != nil {
			subs = append(subs, registry.SubStatus)
		}
		for _, sub := range subs {
			fm, err := m.For(&registry.Store{R: r}, sub, nil)
			if err != nil {
				t.Errorf("%s/%s: %v", r.Resource, sub, err)
				continue
			}
			obj := r.New()
			acc, err := meta.Accessor(obj)
			if err != nil {
				t.Fatalf("%s: %v", r.Resource, err)
			}
			acc.SetName("x")
			acc.SetLabels(map[string]string{"a": "b"})
			out, err := fm.Update(r.New(), obj, "tester")
			if err != nil {
				t.Errorf("%s/%s: %v", r.Resource, sub, err)
				continue
			}
			if sub != "" {
				continue // a subresource write owns no metadata: nothing to record
			}
			if got, _ := meta.Accessor(out); len(got.GetManagedFields()) != 1 {
				t.Errorf("%s: managedFields %+v", r.Resource, got.GetManagedFields())
			}
		}
	}
}
