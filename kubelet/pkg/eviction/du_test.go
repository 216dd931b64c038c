package eviction

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestDiskUsage(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a", "b", "big"), filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(dir, "root")); err != nil {
		t.Fatal(err)
	}
	b, inodes, err := DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	// dir, a, b, big (linked twice, counted once), the symlink.
	if inodes != 5 {
		t.Errorf("inodes = %d, want 5", inodes)
	}
	if b < 1<<20 || b > 2<<20 {
		t.Errorf("bytes = %d, want about 1Mi (the hard link counted once)", b)
	}
	if b, i, err := DiskUsage(filepath.Join(dir, "missing")); err != nil || b != 0 || i != 0 {
		t.Errorf("missing path: %d %d %v, want 0 0 nil", b, i, err)
	}
}
