package fieldmanager

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// Every kind's reset fields, as its strategies say: a kind with a status
// endpoint resets the status through its main resource (and
// pods/ephemeralcontainers), and the spec through status; a pod's status
// also resets metadata.deletionTimestamp and metadata.ownerReferences;
// other subresources, and kinds without status, reset nothing.
func TestResetFieldsOfEveryKind(t *testing.T) {
	probes := []string{".status", ".spec", ".metadata.deletionTimestamp", ".metadata.ownerReferences", ".metadata.labels", ".data",
		".status.conditions", ".status.certificate"}
	for _, r := range registry.Resources() {
		for _, sub := range append([]string{""}, r.Subresources()...) {
			want := map[string]bool{}
			switch {
			case (sub == "" || sub == registry.SubEphemeralContainers) && r.StatusStrategy != nil:
				want[".status"] = true
			case sub == registry.SubStatus:
				want[".spec"] = true
				if r.Group == "" && r.Kind == "Pod" {
					want[".metadata.deletionTimestamp"], want[".metadata.ownerReferences"] = true, true
				}
			}
			// A CertificateSigningRequest's, as upstream's: the main
			// endpoint resets the spec too, /status the conditions too,
			// /approval the spec and the certificate.
			if r.Group == "certificates.k8s.io" && r.Kind == "CertificateSigningRequest" {
				switch sub {
				case "":
					want[".spec"] = true
				case registry.SubStatus:
					want[".status.conditions"] = true
				case "approval":
					want[".spec"], want[".status.certificate"] = true, true
				}
			}
			// What resets the status resets what is in it.
			if want[".status"] {
				want[".status.conditions"], want[".status.certificate"] = true, true
			}
			f := resetFields(r, sub)[fieldpath.APIVersion(r.GroupVersion().String())]
			for _, p := range probes {
				reset := f != nil && f.Filter(fieldpath.NewSet(fieldpath.MakePathOrDie(splitPath(p)...))).Empty()
				if reset != want[p] {
					t.Errorf("%s %s/%s: %s reset = %v, want %v", r.GroupVersion(), r.Resource, sub, p, reset, want[p])
				}
			}
		}
	}
}
