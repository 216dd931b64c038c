package fastpath_test

import (
	"flag"
	"fmt"
	"math/rand"
	"testing"
	"time"

	fuzz "github.com/google/gofuzz"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"skiff.dev/apiserver/pkg/api"
	"skiff.dev/apiserver/pkg/api/apifuzz"
	"skiff.dev/apiserver/pkg/fieldmanager"
	"skiff.dev/apiserver/pkg/registry"
)

// createBoth runs the general path and Create's own on deep copies of
// obj; fast reports whether Create's own path took it.
func createBoth(t *testing.T, fm *fieldmanager.Manager, r *registry.Resource, obj runtime.Object) (slow, fast runtime.Object, tookFast bool) {
	t.Helper()
	slow = fm.UpdateNoErrors(r.New(), obj.DeepCopyObject(), "creator")
	fast, tookFast = fm.CreateFields().Record(r.New(), obj.DeepCopyObject(), "creator")
	if !tookFast {
		fast = fm.Create(r.New(), obj.DeepCopyObject(), "creator")
	}
	return slow, fast, tookFast
}

// sameCreate fails t unless both paths recorded the same entries (their
// times set, and then cleared) and left the objects otherwise equal.
func sameCreate(t *testing.T, what string, slow, fast runtime.Object) {
	t.Helper()
	sa, fa := mustAccessor(t, slow), mustAccessor(t, fast)
	se, fe := sa.GetManagedFields(), fa.GetManagedFields()
	for _, entries := range [][]metav1.ManagedFieldsEntry{se, fe} {
		for i := range entries {
			if entries[i].Manager == "creator" && (entries[i].Time == nil || entries[i].Time.IsZero()) {
				t.Errorf("%s: entry %d without a time", what, i)
			}
			entries[i].Time = nil
		}
	}
	if !equality.Semantic.DeepEqual(se, fe) {
		t.Errorf("%s: managedFields differ:\nUpdateNoErrors: %s\nCreate:         %s", what, describe(se), describe(fe))
		return
	}
	if !equality.Semantic.DeepEqual(slow, fast) {
		t.Errorf("%s: objects differ:\nUpdateNoErrors: %+v\nCreate:         %+v", what, slow, fast)
	}
}

func describe(entries []metav1.ManagedFieldsEntry) string {
	out := ""
	for _, e := range entries {
		raw := ""
		if e.FieldsV1 != nil {
			raw = string(e.FieldsV1.Raw)
		}
		out += fmt.Sprintf("{%s %s %s %s %s} ", e.Manager, e.Operation, e.APIVersion, e.FieldsType, raw)
	}
	if out == "" {
		return "none"
	}
	return out
}

func mustAccessor(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	acc, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return acc
}

// createSeed seeds TestCreateMatchesUpdateFuzzed. The default is fixed,
// so that a run in CI is the same every time; 0 takes one from the clock,
// to explore (go test -run TestCreateMatchesUpdateFuzzed -create-seed 0
// -count 20).
var createSeed = flag.Int64("create-seed", 1, "seed of TestCreateMatchesUpdateFuzzed; 0: from the clock")

// TestCreateMatchesUpdateFuzzed: for objects of every built-in kind
// filled at random (half of them from few distinct strings and numbers),
// Create records exactly what UpdateNoErrors records, and takes its own
// path for at least 90% of those without managedFields (never for those
// with).
func TestCreateMatchesUpdateFuzzed(t *testing.T) {
	const perKind = 150
	m := fieldmanager.New(api.NewCodecs().Scheme)
	seed := *createSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (go test -run TestCreateMatchesUpdateFuzzed ./pkg/fieldmanager/ -create-seed %d repeats this run)", seed, seed)
	fuzzers := []*fuzz.Fuzzer{apifuzz.New(seed, false), apifuzz.New(seed+1, true)}
	rnd := rand.New(rand.NewSource(seed))
	total, took := 0, 0
	for _, r := range registry.Resources() {
		if r.Custom != nil {
			continue
		}
		fm, err := m.For(&registry.Store{R: r}, "", nil)
		if err != nil {
			t.Fatalf("%s: %v", r.Resource, err)
		}
		if fm.CreateFields() == nil {
			t.Errorf("%s: no creator", r.Resource)
			continue
		}
		kindTook := 0
		for i := 0; i < perKind; i++ {
			obj := r.New()
			fuzzers[i%2].Fuzz(obj)
			acc := mustAccessor(t, obj)
			if rnd.Intn(20) != 0 {
				acc.SetManagedFields(nil)
			}
			switch rnd.Intn(3) {
			case 0:
				obj.GetObjectKind().SetGroupVersionKind(r.GroupVersionKind())
			case 1:
				obj.GetObjectKind().SetGroupVersionKind(r.GroupVersionKind().GroupVersion().WithKind(""))
			}
			slow, fast, ok := createBoth(t, fm, r, obj)
			sameCreate(t, fmt.Sprintf("%s #%d", r.Resource, i), slow, fast)
			if len(acc.GetManagedFields()) == 0 {
				total++
				if ok {
					took++
					kindTook++
				}
			} else if ok {
				t.Errorf("%s #%d: own path taken with managedFields present", r.Resource, i)
			}
		}
		t.Logf("%s: own path for %d of %d", r.Resource, kindTook, perKind)
	}
	t.Logf("own path for %d of %d objects without managedFields", took, total)
	if total == 0 || float64(took) < 0.9*float64(total) {
		t.Errorf("own path for only %d of %d objects", took, total)
	}
}

// TestCreateMatchesUpdateEdgeCases compares both paths on hand-made
// objects at the edges of SMD's rules, each expected to take Create's own
// path or not.
func TestCreateMatchesUpdateEdgeCases(t *testing.T) {
	pod := func(mut func(*corev1.Pod)) runtime.Object {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "d"}}
		mut(p)
		return p
	}
	container := corev1.Container{Name: "c", Image: "i"}
	cases := []struct {
		name     string
		resource string
		group    string
		obj      runtime.Object
		own      bool
	}{
		{"only a name", "configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, true},
		{"nothing at all", "configmaps", "", &corev1.ConfigMap{}, true},
		{"with TypeMeta", "configmaps", "", &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": ""}}, true},
		{"wrong TypeMeta", "configmaps", "", &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "x/v9", Kind: "Other"}, ObjectMeta: metav1.ObjectMeta{Name: "c"}}, true},
		{"empty map", "configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{}}, Data: map[string]string{}}, true},
		{"map with an empty value", "configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"": ""}}}, true},
		{"binary data", "configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, BinaryData: map[string][]byte{"a": nil, "b": {}, "c": {1, 2}}}, true},
		{"stripped metadata", "configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "c", Namespace: "d", UID: "u", ResourceVersion: "1", Generation: 3, SelfLink: "/x",
			CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0)),
		}}, true},
		{"reset managedFields", "configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: []metav1.ManagedFieldsEntry{}}}, true},
		{"managedFields present", "configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "x", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)},
		}}}}, false},
		{"empty pod", "pods", "", pod(func(*corev1.Pod) {}), true},
		{"nil and empty lists", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{}
			p.Spec.Volumes = nil
			p.Finalizers = []string{}
		}), true},
		{"zero numbers and empty strings", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{{Name: "", Ports: []corev1.ContainerPort{{ContainerPort: 0}}}}
			p.Spec.RestartPolicy = ""
			p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
		}), true},
		{"status set", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container}
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: "Ready", Status: "True"}}}
		}), true},
		{"duplicate container names", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{container, container, {Name: "other", Image: "j"}}
		}), true},
		{"duplicate ports", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{
				{ContainerPort: 80}, {ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 80, Protocol: corev1.ProtocolUDP},
			}}}
		}), true},
		{"duplicate finalizers", "pods", "", pod(func(p *corev1.Pod) {
			p.Finalizers = []string{"a", "b", "a"}
		}), true},
		{"duplicate env names", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}, {Name: "B"}}}}
		}), true},
		{"list item without its key", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k"}}
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{}}
		}), true},
		{"quantities and int-or-string", "pods", "", pod(func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{{Name: "c",
				Resources:     corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstrFromString("http")}}},
			}}
		}), true},
		{"rc with a template", "replicationcontrollers", "", &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "rc"},
			Spec:       corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}},
		}, true},
		{"rc with an empty template", "replicationcontrollers", "", &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "rc"},
			Spec:       corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{}},
		}, true},
		{"deployment", "deployments", "apps", &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "b"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{container}}},
			},
		}, true},
		{"admitted bench pod", "pods", "", admittedPod(t), true},
	}
	m := fieldmanager.New(api.NewCodecs().Scheme)
	for _, c := range cases {
		r := resourceOf(t, c.group, c.resource)
		fm, err := m.For(&registry.Store{R: r}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		slow, fast, own := createBoth(t, fm, r, c.obj)
		sameCreate(t, c.name, slow, fast)
		if own != c.own {
			t.Errorf("%s: own path %v, want %v", c.name, own, c.own)
		}
	}
}

// TestCreateFallsBack: custom resources and subresources take the general
// path.
func TestCreateFallsBack(t *testing.T) {
	m := fieldmanager.New(api.NewCodecs().Scheme)
	pods := resourceOf(t, "", "pods")
	status, err := m.For(&registry.Store{R: pods}, registry.SubStatus, nil)
	if err != nil {
		t.Fatal(err)
	}
	if status.CreateFields() != nil {
		t.Error("the status subresource has a creator")
	}
	cm := resourceOf(t, "", "configmaps")
	fm, err := m.For(&registry.Store{R: cm}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"a": "b"}}}
	if _, ok := fm.CreateFields().Record(&corev1.ConfigMap{}, u.DeepCopy(), "x"); ok {
		t.Error("own path for an unstructured object")
	}
	out := fm.Create(&corev1.ConfigMap{}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": "b"}}, "")
	got := mustAccessor(t, out).GetManagedFields()
	if len(got) != 1 || got[0].Manager != "unknown" || string(got[0].FieldsV1.Raw) != `{"f:data":{".":{},"f:a":{}}}` {
		t.Errorf("managedFields %s", describe(got))
	}
}

func admittedPod(t *testing.T) *corev1.Pod {
	_, p := benchPod(t)
	return admit(p)
}

func intstrFromString(s string) intstr.IntOrString { return intstr.FromString(s) }

// BenchmarkCreatePod is the field manager's share of a pod create: the
// Update entry of the creating manager over an empty live object.
func BenchmarkCreatePod(b *testing.B) {
	fm, pod := benchPod(b)
	createBench(b, fm, pod)
}

func createBench(b *testing.B, fm *fieldmanager.Manager, pod *corev1.Pod) {
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

func shortcutBench(b *testing.B, fm *fieldmanager.Manager, pod *corev1.Pod) {
	if _, ok := fm.CreateFields().Record(&corev1.Pod{}, pod.DeepCopy(), "bench"); !ok {
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
func benchPod(b testing.TB) (*fieldmanager.Manager, *corev1.Pod) {
	codecs := api.NewCodecs()
	pods := resourceOf(b, "", "pods")
	s := &registry.Store{R: pods}
	fm, err := fieldmanager.New(codecs.Scheme).For(s, "", nil)
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
