package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// entry is what a test checks of one tar entry.
type entry struct {
	Name     string
	Type     byte
	Mode     int64
	Linkname string
	Data     string
}

func readTar(t *testing.T, b []byte) []entry {
	t.Helper()
	var out []entry
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{Name: h.Name, Type: h.Typeflag, Mode: h.Mode, Linkname: h.Linkname, Data: string(data)})
	}
}

func TestLayerTar(t *testing.T) {
	tests := []struct {
		name  string
		build func(l *layer)
		want  []entry
	}{
		{
			name:  "parents are created before what they hold",
			build: func(l *layer) { l.File("/usr/local/bin/nnp", []byte("x"), 0o4755) },
			want: []entry{
				{Name: "usr/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/local/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/local/bin/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "usr/local/bin/nnp", Type: tar.TypeReg, Mode: 0o4755, Data: "x"},
			},
		},
		{
			name: "symlinks and an explicit directory mode",
			build: func(l *layer) {
				l.Symlink("bin/sh", "busybox").File("bin/busybox", []byte("bb"), 0o755).Dir("tmp", 0o1777)
			},
			want: []entry{
				{Name: "bin/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "bin/busybox", Type: tar.TypeReg, Mode: 0o755, Data: "bb"},
				{Name: "bin/sh", Type: tar.TypeSymlink, Mode: 0o777, Linkname: "busybox"},
				{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
			},
		},
		{
			name: "a later file replaces an earlier one",
			build: func(l *layer) {
				l.File("etc/passwd", []byte("a"), 0o644).File("etc/passwd", []byte("b"), 0o600)
			},
			want: []entry{
				{Name: "etc/", Type: tar.TypeDir, Mode: 0o755},
				{Name: "etc/passwd", Type: tar.TypeReg, Mode: 0o600, Data: "b"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLayer()
			tt.build(l)
			b, err := l.Tar()
			if err != nil {
				t.Fatal(err)
			}
			if got := readTar(t, b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestLayerMissingHostFile(t *testing.T) {
	l := newLayer().HostFile("agnhost", filepath.Join(t.TempDir(), "missing"), 0o755)
	if _, err := l.Tar(); err == nil || !strings.Contains(err.Error(), "agnhost") {
		t.Errorf("Tar() error = %v, want one naming agnhost", err)
	}
}

func TestParseLdd(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want []string
	}{
		{
			name: "dynamic",
			out: "\tlinux-vdso.so.1 (0x00007ffd)\n" +
				"\tlibidn2.so.0 => /lib/x86_64-linux-gnu/libidn2.so.0 (0x00007fbe50b16000)\n" +
				"\t/lib64/ld-linux-x86-64.so.2 (0x00007fbe50c70000)\n",
			want: []string{"/lib/x86_64-linux-gnu/libidn2.so.0", "/lib64/ld-linux-x86-64.so.2"},
		},
		{name: "static", out: "\tstatically linked\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseLdd(tt.out); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseLdd() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteLayout(t *testing.T) {
	dir := t.TempDir()
	l := newLayer().File("pause", []byte("binary"), 0o755)
	cfg := runConfig{Entrypoint: []string{"/pause"}, User: "65535:65535"}
	digest, err := writeLayout(dir, "3.10", []*layer{l}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var idx index
	readJSON(t, filepath.Join(dir, "index.json"), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Annotations[annotationRefName] != "3.10" || idx.Manifests[0].Digest != digest {
		t.Fatalf("index = %+v, want one manifest tagged 3.10 with digest %s", idx, digest)
	}
	var m manifest
	readJSON(t, blobPath(dir, idx.Manifests[0].Digest), &m)
	var ic imageConfig
	readJSON(t, blobPath(dir, m.Config.Digest), &ic)
	_, diffID, _ := l.blob()
	if len(m.Layers) != 1 || len(ic.RootFS.DiffIDs) != 1 || ic.RootFS.DiffIDs[0] != diffID {
		t.Errorf("manifest layers %+v, diff IDs %v, want one layer with diff ID %s", m.Layers, ic.RootFS.DiffIDs, diffID)
	}
	if !reflect.DeepEqual(ic.Config, cfg) || ic.OS != "linux" || ic.Architecture != "amd64" {
		t.Errorf("config = %+v, want %+v on linux/amd64", ic, cfg)
	}
	if _, err := os.Stat(blobPath(dir, m.Layers[0].Digest)); err != nil {
		t.Errorf("layer blob: %v", err)
	}
}

func blobPath(dir, digest string) string {
	return filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
