package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const twoDocs = `# a comment before the first document
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
data:
  k: v
---
---   # an empty document
apiVersion: apps/v1
kind: Deployment
metadata:
  name: second
  namespace: prod
`

func TestParseMultiDocument(t *testing.T) {
	objs, err := Parse("two.yaml", []byte(twoDocs))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("got %d objects, want 2", len(objs))
	}
	want := []struct {
		kind, name, ns string
		line           int
	}{{"ConfigMap", "first", "", 1}, {"Deployment", "second", "prod", 10}}
	for i, w := range want {
		o := objs[i]
		if o.GetKind() != w.kind || o.GetName() != w.name || o.GetNamespace() != w.ns || o.Line != w.line {
			t.Errorf("object %d = %s %s/%s at line %d, want %s %s/%s at line %d",
				i, o.GetKind(), o.GetNamespace(), o.GetName(), o.Line, w.kind, w.ns, w.name, w.line)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantLine int
		wantMsg  string
	}{
		{
			name:     "bad indentation in the second document",
			data:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   labels: x\n",
			wantLine: 10,
			wantMsg:  "mapping values are not allowed",
		},
		{
			name:     "tab indentation",
			data:     "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: a\n",
			wantLine: 4,
			wantMsg:  "tab",
		},
		{name: "missing kind", data: "apiVersion: v1\nmetadata:\n  name: a\n", wantLine: 1, wantMsg: "kind not set"},
		{name: "missing apiVersion", data: "---\nkind: Pod\nmetadata:\n  name: a\n", wantLine: 2, wantMsg: "apiVersion not set"},
		{name: "missing name", data: "apiVersion: v1\nkind: Pod\n", wantLine: 1, wantMsg: "no metadata.name"},
		{name: "not a mapping", data: "- a\n- b\n", wantLine: 1, wantMsg: "not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tt.data))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Line != tt.wantLine || !strings.Contains(se.Msg, tt.wantMsg) || se.Source != "f.yaml" {
				t.Errorf("error = %q (line %d), want line %d containing %q", err, se.Line, tt.wantLine, tt.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestParseList(t *testing.T) {
	data := `{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},
{"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"}}]}`
	objs, err := Parse("list.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "ConfigMap" || objs[1].GetName() != "b" {
		t.Fatalf("got %d objects: %v", len(objs), objs)
	}
}

func TestReaderDirectoriesAndStdin(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" }
	write("b.yaml", cm("b"))
	write("a.yml", cm("a"))
	write("notes.txt", "not a manifest")
	write("sub/c.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)

	names := func(objs []*Object) string {
		var n []string
		for _, o := range objs {
			n = append(n, o.GetName())
		}
		return strings.Join(n, ",")
	}
	r := &Reader{Stdin: strings.NewReader(cm("from-stdin"))}
	objs, err := r.Read([]string{dir, "-"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(objs); got != "a,b,from-stdin" {
		t.Errorf("non-recursive read = %s, want a,b,from-stdin", got)
	}
	if objs[2].Source != "STDIN" {
		t.Errorf("stdin object source = %q, want STDIN", objs[2].Source)
	}
	objs, err = (&Reader{Recursive: true}).Read([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(objs); got != "a,b,c" {
		t.Errorf("recursive read = %s, want a,b,c", got)
	}
	if _, err := (&Reader{}).Read([]string{filepath.Join(dir, "missing.yaml")}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file error = %v, want 'no such file'", err)
	}
	if _, err := (&Reader{}).Read(nil); err == nil {
		t.Error("Read(nil) = nil error, want an error")
	}
}
