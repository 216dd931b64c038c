package containerd

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/cio"

	"skiff.dev/kubelet/pkg/logs"
	"skiff.dev/kubelet/pkg/pod"
)

// labelStdin marks a container whose pod spec asks for stdin: "once"
// (stdinOnce: closed when the first attach's stdin ends) or "open".
const labelStdin = "skiff.dev/stdin"

// labelTTY marks a container whose pod spec asks for a tty: its task has
// a terminal, whose output the kubelet copies into the log file as
// stdout (the terminal merges stderr into it), as containerd's CRI
// plugin does.
const labelTTY = "skiff.dev/tty"

// copiedStreams says whether the kubelet copies the container's streams
// (stdin or a terminal) instead of the log driver.
func copiedStreams(labels map[string]string) bool {
	return labels[labelStdin] != "" || labels[labelTTY] != ""
}

// stdinStream is the open stdin of a running container, which attach
// sessions write to. Such a container's streams go through FIFOs that
// the kubelet copies (stdin from the pipe, stdout and stderr into the
// log file in the same format as the log driver's), as containerd's CRI
// plugin does for every container; the others keep the log driver.
//
// The stdin's writer lives in the kubelet: when the kubelet stops, the
// container's stdin reaches its end (the shim closes it), as it does
// after the first attach with stdinOnce. A kubelet started again takes
// up the container's output (reattachStdin), not its stdin.
type stdinStream struct {
	once bool
	// none: the container has a terminal but no stdin.
	none bool
	w    *io.PipeWriter
	// eof is closed when the task's side has read the end of the stdin:
	// then the process's stdin is closed through the task (the shim does
	// not pass a FIFO's end on), as exec and ctr do.
	eof chan struct{}
	// io is the task's streams and closed the CloseIO done (set once the
	// task exists).
	io     cio.IO
	closed chan struct{}
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
	if s == nil || s.none {
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
	s := &stdinStream{once: labels[labelStdin] == "once", none: labels[labelStdin] == "", w: pw, eof: make(chan struct{}), closed: make(chan struct{})}
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
	var stdin io.Reader = &eofNotifier{r: pr, done: s.eof}
	if s.none {
		// Nothing to close: the task is made without a stdin.
		stdin = nil
		close(s.eof)
	}
	if labels[labelTTY] == "" {
		return cio.WithStreams(stdin, stdout, stderr), finish, true, nil
	}
	// A terminal has one output, stdout, as containerd's CRI plugin
	// logs it.
	return func(o *cio.Streams) {
		cio.WithStreams(stdin, stdout, nil)(o)
		cio.WithTerminal(o)
	}, finish, true, nil
}

// ResizeContainer sets the size of the terminal of the running container
// id (one started with tty: true).
func (r *Runtime) ResizeContainer(ctx context.Context, id string, size pod.TerminalSize) error {
	ctx = r.ns(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return err
	}
	if labels, err := c.Labels(ctx); err != nil {
		return err
	} else if labels[labelTTY] == "" {
		return fmt.Errorf("container %s has no terminal: it was not created with tty: true", id)
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return fmt.Errorf("container is not running: %w", err)
	}
	return task.Resize(ctx, uint32(size.Width), uint32(size.Height))
}

// copyUntilExit finishes id's stdin once the task's output ends (the
// container exited) and removes its FIFOs, unless the kubelet is
// stopping (the next one reopens them); when the stdin ends, it closes
// the process's stdin.
func (r *Runtime) copyUntilExit(ctx context.Context, id string, task containerd.Task, finish func()) {
	tio := task.IO()
	if tio == nil {
		finish()
		return
	}
	r.smu.Lock()
	s := r.stdins[id]
	if s != nil {
		s.io = tio
	}
	r.smu.Unlock()
	done := make(chan struct{})
	if s != nil {
		go func() {
			defer close(s.closed)
			select {
			case <-s.eof:
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				_ = task.CloseIO(ctx, containerd.WithStdinCloser)
			case <-done:
			}
		}()
	}
	go func() {
		tio.Wait()
		close(done)
		finish()
		if !r.stopping.Load() {
			_ = tio.Close()
		}
	}()
}

// reattachStdin takes up again the streams of a running container with
// stdin that this kubelet does not copy (it was started by an earlier
// kubelet process): the FIFOs are reopened where the task has them.
func (r *Runtime) reattachStdin(ctx context.Context, c containerd.Container, labels map[string]string) error {
	if !copiedStreams(labels) {
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
	r.copyUntilExit(ctx, c.ID(), task, finish)
	return nil
}

// closeStdins ends the stdins of the containers with stdin and stops
// copying their output (the kubelet is stopping), as the end of the
// kubelet's process would. Their output waits in the FIFOs, whose files
// stay, for the next kubelet (reattachStdin).
func (r *Runtime) closeStdins() {
	r.stopping.Store(true)
	r.smu.Lock()
	streams := make([]*stdinStream, 0, len(r.stdins))
	for _, s := range r.stdins {
		streams = append(streams, s)
	}
	r.smu.Unlock()
	for _, s := range streams {
		_ = s.w.Close()
		if s.io == nil {
			continue
		}
		// The process's stdin closed (with the client still open),
		// then the kubelet's ends of the FIFOs, not the FIFO files.
		select {
		case <-s.closed:
		case <-time.After(10 * time.Second):
		}
		s.io.Cancel()
	}
}
