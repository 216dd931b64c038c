package logs

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
)

// DriverArg is the first argument with which containerd's shim starts the
// kubelet's executable as a logging driver; the second is the log file.
const DriverArg = "skiff-log-driver"

// IsDriver says whether args (os.Args) ask for the logging driver.
func IsDriver(args []string) bool { return len(args) == 3 && args[1] == DriverArg }

// DriverMain is the logging driver: it appends the records of the
// container's stdout (fd 3) and stderr (fd 4) to path until both close,
// after telling the shim it is ready by closing fd 5. It returns the
// process exit code.
//
// SIGTERM is ignored: when the task is deleted, containerd's shim closes
// the pipes and sends SIGTERM at once (binaryIO.cancel), then waits up to
// 12 s before SIGKILL. Dying on the SIGTERM would lose what is still in
// the pipes and a last line with no newline ("printf 'last words'; exit
// 2"), which the kubelet reads after the delete for a termination message
// under FallbackToLogsOnError. The pipes are closed, so the copy ends.
func DriverMain(path string) int {
	signal.Ignore(syscall.SIGTERM)
	if err := runDriver(path); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", DriverArg, err)
		return 1
	}
	return 0
}

func runDriver(path string) error {
	stdout, stderr, ready := os.NewFile(3, "stdout"), os.NewFile(4, "stderr"), os.NewFile(5, "ready")
	if stdout == nil || stderr == nil || ready == nil {
		return fmt.Errorf("file descriptors 3, 4 and 5 must be open")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer f.Close()
	_ = ready.Close()
	return Copy(NewFile(f), stdout, stderr)
}

// Copy writes records of stdout and stderr into file until both end.
func Copy(file *File, stdout, stderr io.Reader) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []struct {
		name string
		r    io.Reader
	}{{Stdout, stdout}, {Stderr, stderr}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := file.Stream(s.name)
			_, err := io.Copy(w, s.r)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if errs[0] != nil {
		return errs[0]
	}
	return errs[1]
}
