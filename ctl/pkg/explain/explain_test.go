package explain

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files")

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

func TestPrint(t *testing.T) {
	data, err := os.ReadFile("testdata/apps-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	tests := []struct {
		file string
		opts Options
	}{
		{"deployment.txt", Options{GVK: gvk}},
		{"deployment-spec.txt", Options{GVK: gvk, Path: []string{"spec"}}},
		{"deployment-strategy.txt", Options{GVK: gvk, Path: []string{"spec", "strategy"}}},
		{"deployment-recursive.txt", Options{GVK: gvk, Recursive: true}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Print(&buf, doc, tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, buf.Bytes())
		})
	}
	if err := Print(&bytes.Buffer{}, doc, Options{GVK: gvk, Path: []string{"spec", "nope"}}); err == nil {
		t.Error("a missing field was explained")
	}
	if err := Print(&bytes.Buffer{}, doc, Options{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Nope"}}); err == nil {
		t.Error("a missing kind was explained")
	}
	if got := DocumentPath(schema.GroupVersion{Version: "v1"}); got != "api/v1" {
		t.Errorf("DocumentPath(v1) = %s", got)
	}
}
