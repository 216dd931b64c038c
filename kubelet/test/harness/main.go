package harness

import (
	"fmt"
	"os"
	"sync"
)

// Main is a T for programs: Fatal and Skip print, run the cleanups and
// exit; Close runs the cleanups at the end.
type Main struct {
	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

var _ T = (*Main)(nil)

// Helper implements T.
func (m *Main) Helper() {}

// Logf implements T.
func (m *Main) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// Fatal implements T.
func (m *Main) Fatal(args ...any) { m.exit(1, fmt.Sprint(args...)) }

// Fatalf implements T.
func (m *Main) Fatalf(format string, args ...any) { m.exit(1, fmt.Sprintf(format, args...)) }

// Skip implements T: the program cannot run here.
func (m *Main) Skip(args ...any) { m.exit(2, "cannot run: "+fmt.Sprint(args...)) }

// Skipf implements T.
func (m *Main) Skipf(format string, args ...any) {
	m.exit(2, "cannot run: "+fmt.Sprintf(format, args...))
}

// Failed implements T.
func (m *Main) Failed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed
}

// Cleanup implements T.
func (m *Main) Cleanup(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cleanups = append(m.cleanups, f)
}

// TempDir implements T: a new directory removed at Close.
func (m *Main) TempDir() string {
	dir, err := os.MkdirTemp("", "skiff-bench")
	if err != nil {
		m.Fatal(err)
	}
	m.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Close runs the cleanups, last registered first.
func (m *Main) Close() {
	m.mu.Lock()
	fs := m.cleanups
	m.cleanups = nil
	m.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func (m *Main) exit(code int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	m.mu.Lock()
	m.failed = true
	m.mu.Unlock()
	m.Close()
	os.Exit(code)
}
