package apply

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestModifiedConfigurationIsKubectls(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "no annotations",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n  a: \"1\"\n",
			want: `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"settings","namespace":"default"}}` + "\n",
		},
		{
			name: "other annotations kept, old last-applied dropped, HTML escaped",
			in: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  annotations:\n    owner: a&b\n" +
				"    kubectl.kubernetes.io/last-applied-configuration: old\n",
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"owner":"a\u0026b"},"name":"s"}}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := obj(t, tt.in)
			got, err := ModifiedConfiguration(o, false)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			withAnn, err := WithAnnotation(o)
			if err != nil {
				t.Fatal(err)
			}
			if withAnn.GetAnnotations()[Annotation] != tt.want {
				t.Errorf("annotation = %q, want %q", withAnn.GetAnnotations()[Annotation], tt.want)
			}
		})
	}
}

func TestThreeWayRemovesDroppedFields(t *testing.T) {
	v1 := obj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web, team: blue}}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: app, image: "web:1", env: [{name: A, value: "1"}, {name: B, value: "2"}]}
      - {name: sidecar, image: "log:1"}
`)
	live, err := WithAnnotation(v1)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else set a field the manifest never had: it must stay.
	if err := unstructured.SetNestedField(live.Object, "ops", "metadata", "labels", "extra"); err != nil {
		t.Fatal(err)
	}
	v2 := obj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  template:
    spec:
      containers:
      - {name: app, image: "web:2", env: [{name: A, value: "1"}]}
`)
	p, err := ThreeWay(v2, live)
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != types.StrategicMergePatchType {
		t.Errorf("patch type = %s, want strategic merge", p.Type)
	}
	var patch map[string]any
	if err := json.Unmarshal(p.Data, &patch); err != nil {
		t.Fatal(err)
	}
	labels, _, _ := unstructured.NestedMap(patch, "metadata", "labels")
	if v, ok := labels["team"]; !ok || v != nil {
		t.Errorf("patch does not delete label team: %s", p.Data)
	}
	if _, ok := labels["extra"]; ok {
		t.Errorf("patch touches a label the manifest never set: %s", p.Data)
	}
	if v, ok, _ := unstructured.NestedFieldNoCopy(patch, "spec", "replicas"); !ok || v != nil {
		t.Errorf("patch does not delete spec.replicas: %s", p.Data)
	}
	// Unchanged manifest: empty patch.
	p, err = ThreeWay(v1, live)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Empty() {
		t.Errorf("patch for an unchanged manifest = %s, want {}", p.Data)
	}
}

func TestThreeWayUnknownKindUsesMergePatch(t *testing.T) {
	v1 := obj(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {a: 1, b: 2}\n")
	live, _ := WithAnnotation(v1)
	v2 := obj(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {a: 1}\n")
	p, err := ThreeWay(v2, live)
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != types.MergePatchType {
		t.Errorf("patch type = %s, want merge", p.Type)
	}
	var patch map[string]any
	_ = json.Unmarshal(p.Data, &patch)
	if v, ok, _ := unstructured.NestedFieldNoCopy(patch, "spec", "b"); !ok || v != nil {
		t.Errorf("patch does not delete spec.b: %s", p.Data)
	}
}
