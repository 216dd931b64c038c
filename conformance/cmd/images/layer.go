package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

// layer is the content of one image layer: regular files, directories and
// symlinks by their path in the image (without a leading slash).
type layer struct {
	entries map[string]*tar.Header
	data    map[string][]byte
	err     error

	// Filled by blob.
	gz     []byte
	diffID string
}

func newLayer() *layer {
	return &layer{entries: map[string]*tar.Header{}, data: map[string][]byte{}}
}

// epoch is the time of every entry, so the same input gives the same layer.
var epoch = time.Unix(0, 0)

func clean(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

// parents adds the missing parent directories of p.
func (l *layer) parents(p string) {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if _, ok := l.entries[d]; !ok {
			l.entries[d] = &tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}
		}
	}
}

// Dir adds a directory.
func (l *layer) Dir(p string, mode int64) *layer {
	p = clean(p)
	l.parents(p)
	l.entries[p] = &tar.Header{Name: p + "/", Typeflag: tar.TypeDir, Mode: mode, ModTime: epoch}
	return l
}

// File adds a regular file with the given content.
func (l *layer) File(p string, data []byte, mode int64) *layer {
	p = clean(p)
	l.parents(p)
	l.entries[p] = &tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(data)), ModTime: epoch}
	l.data[p] = data
	return l
}

// Symlink adds a symbolic link p -> target.
func (l *layer) Symlink(p, target string) *layer {
	p = clean(p)
	l.parents(p)
	l.entries[p] = &tar.Header{Name: p, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777, ModTime: epoch}
	return l
}

// HostFile adds a file of this machine (symlinks followed) at p; the first
// error is kept and returned by Err.
func (l *layer) HostFile(p, host string, mode int64) *layer {
	data, err := os.ReadFile(host)
	if err != nil {
		l.fail(fmt.Errorf("%s: %w", p, err))
		return l
	}
	return l.File(p, data, mode)
}

// HostBinary adds an executable of this machine at p with the shared
// libraries ldd lists for it, each at its own path.
func (l *layer) HostBinary(p, host string) *layer {
	l.HostFile(p, host, 0o755)
	libs, err := sharedLibraries(host)
	if err != nil {
		l.fail(err)
		return l
	}
	for _, lib := range libs {
		l.HostFile(lib, lib, 0o755)
	}
	return l
}

func (l *layer) fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

// Err is the first error met while adding host files.
func (l *layer) Err() error { return l.err }

var lddLine = regexp.MustCompile(`(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)`)

// sharedLibraries runs ldd on a binary; a static binary has none.
func sharedLibraries(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") || strings.Contains(string(out), "statically linked") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %v: %s", bin, err, out)
	}
	return parseLdd(string(out)), nil
}

// parseLdd reads the library paths of ldd's output.
func parseLdd(out string) []string {
	var libs []string
	for _, line := range strings.Split(out, "\n") {
		if m := lddLine.FindStringSubmatch(line); m != nil {
			libs = append(libs, m[1])
		}
	}
	return libs
}

// Tar writes the layer as an uncompressed tar, entries in path order (a
// directory before what it holds).
func (l *layer) Tar() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	names := make([]string, 0, len(l.entries))
	for n := range l.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := *l.entries[n]
		if err := tw.WriteHeader(&h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(l.data[n]); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// blob returns the gzipped layer and the digest of its tar (the diff ID),
// computed once.
func (l *layer) blob() ([]byte, string, error) {
	if l.gz != nil {
		return l.gz, l.diffID, nil
	}
	raw, err := l.Tar()
	if err != nil {
		return nil, "", err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	l.gz, l.diffID = gz.Bytes(), sha256Digest(raw)
	return l.gz, l.diffID, nil
}

func sha256Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}
