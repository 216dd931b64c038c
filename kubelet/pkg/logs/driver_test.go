package logs

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMain runs the test binary as the logging driver when the driver
// test starts it so.
func TestMain(m *testing.M) {
	if path := os.Getenv("SKIFF_LOGS_TEST_DRIVER"); path != "" {
		os.Exit(DriverMain(path))
	}
	os.Exit(m.Run())
}

// The shim's order at a task's delete: it closes the pipes and sends
// SIGTERM at once. Here SIGTERM comes even before the pipes close, with a
// last line that has no newline still unwritten: the driver must keep it.
func TestDriverKeepsTheLastLineOnSIGTERM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.log")
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SKIFF_LOGS_TEST_DRIVER="+path)
	cmd.ExtraFiles = []*os.File{outR, errR, readyW}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*os.File{outR, errR, readyW} {
		_ = f.Close()
	}
	// Ready: fd 5 closed by the driver, after it set up its signals.
	if _, err := io.ReadAll(readyR); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(outW, "first\nlast words"); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = outW.Close()
	_ = errW.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the driver: %v", err)
	}
	var buf bytes.Buffer
	if err := Read(context.Background(), path, &buf, Options{TailLines: -1}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "first\nlast words" {
		raw, _ := os.ReadFile(path)
		t.Errorf("log = %q (file %q), want both lines", got, raw)
	}
}
