package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type buf struct{ bytes.Buffer }

func (b *buf) Close() error { return nil }

func TestLogOneLinePerEvent(t *testing.T) {
	var b buf
	l := NewWriter(&b)
	start := time.Now()
	for _, name := range []string{"a", "b"} {
		if err := l.Log(&Event{AuditID: name, Verb: "get", User: User{Username: "alice", Groups: []string{"devs"}},
			ObjectRef: &ObjectRef{Resource: "secrets", Namespace: "default", Name: name}, ResponseStatus: ResponseStatus{Code: 200},
			RequestReceivedTimestamp: start, StageTimestamp: start.Add(time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %q", len(lines), b.String())
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &ev); err != nil {
		t.Fatal(err)
	}
	if ev["kind"] != "Event" || ev["apiVersion"] != "audit.k8s.io/v1" || ev["level"] != "Metadata" || ev["verb"] != "get" {
		t.Errorf("event = %v", ev)
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	l, err := New(Options{Path: filepath.Join(dir, "audit.log"), MaxSizeMB: 1, MaxBackups: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := strings.Repeat("x", 1024)
	for i := 0; i < 2000; i++ {
		if err := l.Log(&Event{AuditID: big, Verb: "list"}); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := os.ReadDir(dir)
	if len(files) < 2 {
		t.Errorf("after 2 MB of events with a 1 MB limit: %d files, want a rotated backup", len(files))
	}
}
