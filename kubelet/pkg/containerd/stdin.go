package containerd

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/cio"

	"skiff.dev/kubelet/pkg/logs"
)

// labelStdin marks a container whose pod spec asks for stdin: "once"
// (stdinOnce: closed when the first attach's stdin ends) or "open".
const labelStdin = "skiff.dev/stdin"

// stdinStream is the open stdin of a running container, which attach
// sessions write to. Such a container's streams go through FIFOs that
// the kubelet copies (stdin from the pipe, stdout and stderr into the
// log file in the same format as the log driver's), as containerd's CRI
// plugin does for every container; the others keep the log driver.
type stdinStream struct {
	once bool
	w    *io.PipeWriter
}

// attachedStdin is one attach's stdin: its Close ends the container's
// stdin only for stdinOnce.
type attachedStdin struct{ s *stdinStream }

func (a attachedStdin) Write(p []byte) (int, error) { return a.s.w.Write(p) }

func (a attachedStdin) Close() error {
	if a.s.once {
		return a.s.w.Close()
	}
	return nil
}

// AttachStdin is a writer to the stdin of the running container id; its
// Close ends this attach's input (and the container's stdin when the pod
// spec says stdinOnce). A container started without stdin has none.
func (r *Runtime) AttachStdin(_ context.Context, id string) (io.WriteCloser, error) {
	r.smu.Lock()
	s := r.stdins[id]
	r.smu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("container %s has no open stdin: it was not started with stdin: true, or it is not running", id)
	}
	return attachedStdin{s}, nil
}

// stdinIO registers id's stdin and returns the streams to give its task
// and what to call once the task's output is all copied. attach is
// false when the stdin was registered already (a task being created or
// attached to meanwhile).
func (r *Runtime) stdinIO(id string, labels map[string]string) (opt cio.Opt, finish func(), ok bool, err error) {
	r.smu.Lock()
	defer r.smu.Unlock()
	if r.stdins[id] != nil {
		return nil, nil, false, nil
	}
	var out io.Writer = io.Discard
	var file *os.File
	if p := labels[labelLogPath]; p != "" {
		if file, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640); err != nil {
			return nil, nil, false, fmt.Errorf("opening the log file: %w", err)
		}
		out = file
	}
	lf := logs.NewFile(out)
	stdout, stderr := lf.Stream(logs.Stdout), lf.Stream(logs.Stderr)
	pr, pw := io.Pipe()
	s := &stdinStream{once: labels[labelStdin] == "once", w: pw}
	if r.stdins == nil {
		r.stdins = map[string]*stdinStream{}
	}
	r.stdins[id] = s
	var finished sync.Once
	finish = func() {
		finished.Do(func() {
			r.smu.Lock()
			if r.stdins[id] == s {
				delete(r.stdins, id)
			}
			r.smu.Unlock()
			_ = pw.Close()
			_ = stdout.Close()
			_ = stderr.Close()
			if file != nil {
				_ = file.Close()
			}
		})
	}
	return cio.WithStreams(pr, stdout, stderr), finish, true, nil
}

// copyUntilExit finishes id's stdin once the task's output ends (the
// container exited) and removes its FIFOs.
func copyUntilExit(tio cio.IO, finish func()) {
	if tio == nil {
		finish()
		return
	}
	go func() {
		tio.Wait()
		finish()
		_ = tio.Close()
	}()
}

// reattachStdin takes up again the streams of a running container with
// stdin that this kubelet does not copy (it was started by an earlier
// kubelet process): the FIFOs are reopened where the task has them.
func (r *Runtime) reattachStdin(ctx context.Context, c containerd.Container, labels map[string]string) error {
	if labels[labelStdin] == "" {
		return nil
	}
	opt, finish, ok, err := r.stdinIO(c.ID(), labels)
	if err != nil || !ok {
		return err
	}
	task, err := c.Task(ctx, cio.NewAttach(opt))
	if err != nil {
		finish()
		return fmt.Errorf("reattaching to the streams of container %s: %w", c.ID(), err)
	}
	copyUntilExit(task.IO(), finish)
	return nil
}
