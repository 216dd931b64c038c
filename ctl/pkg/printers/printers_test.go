package printers

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n--- got ---\n%s--- want ---\n%s", path, got, want)
	}
}

func rowObject(ns, name string, labels map[string]string) runtime.RawExtension {
	m := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
	}
	raw, _ := runtime.Encode(unstructured.UnstructuredJSONScheme, mustUnstructured(m))
	return runtime.RawExtension{Raw: raw}
}

func mustUnstructured(obj runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// podTable is a Table as the API server returns it for pods.
func podTable() *metav1.Table {
	return &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"},
			{Name: "Ready", Type: "string"},
			{Name: "Status", Type: "string"},
			{Name: "Restarts", Type: "string"},
			{Name: "Age", Type: "string"},
			{Name: "IP", Type: "string", Priority: 1},
			{Name: "Node", Type: "string", Priority: 1},
			{Name: "Nominated Node", Type: "string", Priority: 1},
			{Name: "Readiness Gates", Type: "string", Priority: 1},
		},
		Rows: []metav1.TableRow{
			{Cells: []any{"nginx-7d9c-abcde", "1/1", "Running", "0", "5m", "10.244.0.5", "node-1", "<none>", "<none>"},
				Object: rowObject("default", "nginx-7d9c-abcde", map[string]string{"app": "nginx", "pod-template-hash": "7d9c"})},
			{Cells: []any{"web", "0/2", "ContainerCreating", int64(3), "3d4h", "<none>", "node-22", "<none>", "<none>"},
				Object: rowObject("kube-system", "web", nil)},
			{Cells: []any{"multi\nline", "0/1", "Pending", "0", "10s", nil, "<none>", "<none>", "<none>"},
				Object: rowObject("default", "multi", map[string]string{"tier": "db"})},
		},
	}
}

func TestPrintTable(t *testing.T) {
	tests := []struct {
		name string
		opts TableOptions
	}{
		{name: "pods.txt", opts: TableOptions{}},
		{name: "pods-wide.txt", opts: TableOptions{Wide: true}},
		{name: "pods-all-namespaces.txt", opts: TableOptions{WithNamespace: true}},
		{name: "pods-kind.txt", opts: TableOptions{KindPrefix: "pod"}},
		{name: "pods-no-headers.txt", opts: TableOptions{NoHeaders: true}},
		{name: "pods-show-labels.txt", opts: TableOptions{ShowLabels: true, LabelColumns: []string{"app"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := PrintTable(NewColumns(&buf), podTable(), tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// TestColumnsRememberWidths checks that rows printed after the header
// (a watch) keep the header's widths and widen only when they must.
func TestColumnsRememberWidths(t *testing.T) {
	var buf bytes.Buffer
	c := NewColumns(&buf)
	c.Add("NAME", "READY", "AGE")
	c.Add("a", "1/1", "1s")
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	c.Add("b", "0/1", "2s")
	c.Add("a-much-longer-name", "1/1", "3s")
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	golden(t, "columns-watch.txt", buf.Bytes())
}

func testObjects() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"replicas": int64(3)},
		}},
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "nginx", "namespace": "default"},
			"status":   map[string]any{"phase": "Running", "podIP": "10.244.0.7"},
		}},
	}
}

func TestObjectPrinter(t *testing.T) {
	tests := []struct {
		output string
		single bool
		file   string
	}{
		{output: "yaml", single: true, file: "object-single.yaml"},
		{output: "yaml", file: "object-list.yaml"},
		{output: "json", single: true, file: "object-single.json"},
		{output: "json", file: "object-list.json"},
		{output: "name", file: "object-names.txt"},
		{output: "jsonpath={.metadata.name}", single: true, file: "object-jsonpath-single.txt"},
		{output: "custom-columns=NAME:.metadata.name,KIND:kind,REPLICAS:.spec.replicas,IP:{.status.podIP}", file: "object-custom-columns.txt"},
		{output: "jsonpath={range .items[*]}{.kind}/{.metadata.name}{\"\\n\"}{end}", file: "object-jsonpath-list.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := ParseOutput(tt.output)
			if err != nil {
				t.Fatal(err)
			}
			objs := testObjects()
			if tt.single {
				objs = objs[:1]
			}
			var buf bytes.Buffer
			if err := p.Print(&buf, objs, tt.single); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, buf.Bytes())
		})
	}
}

func TestParseOutputErrors(t *testing.T) {
	for _, o := range []string{"jsonpath", "jsonpath={.a", "xml", "custom-columns=", "custom-columns=NAME", "custom-columns=N:{.a"} {
		if _, err := ParseOutput(o); err == nil {
			t.Errorf("ParseOutput(%q) = nil error, want an error", o)
		}
	}
	for _, o := range []string{"", "wide"} {
		if p, err := ParseOutput(o); err != nil || p != nil {
			t.Errorf("ParseOutput(%q) = %v, %v; want nil, nil (a table)", o, p, err)
		}
	}
}

func TestSortKey(t *testing.T) {
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"metadata": map[string]any{"name": "b", "creationTimestamp": "2026-01-02T00:00:00Z"}, "spec": map[string]any{"replicas": int64(10)}}},
		{Object: map[string]any{"metadata": map[string]any{"name": "c", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": map[string]any{"replicas": int64(9)}}},
		{Object: map[string]any{"metadata": map[string]any{"name": "a", "creationTimestamp": "2026-01-03T00:00:00Z"}}},
	}
	names := func() string {
		s := ""
		for _, o := range objs {
			s += o.GetName()
		}
		return s
	}
	for _, tt := range []struct{ expr, want string }{
		{".metadata.name", "abc"},
		{"{.spec.replicas}", "acb"},
		{".metadata.creationTimestamp", "cba"},
	} {
		k, err := ParseSortBy(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		k.SortObjects(objs)
		if got := names(); got != tt.want {
			t.Errorf("sort by %s = %s, want %s", tt.expr, got, tt.want)
		}
	}
}
