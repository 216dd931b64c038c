package containerd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/cio"

	"skiff.dev/kubelet/pkg/pod"
)

// ExecStream runs o.Cmd in the running container id with the container's
// process settings (user, environment, working directory, capabilities)
// and o's streams, and returns its exit code once it exits and its output
// is copied. When Stdin ends, the process's stdin is closed.
func (r *Runtime) ExecStream(ctx context.Context, id string, o pod.ExecOptions) (int32, error) {
	ctx = r.ns(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return 0, err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("container is not running: %w", err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return 0, err
	}
	proc := *spec.Process
	proc.Args, proc.Terminal = o.Cmd, o.TTY
	stdinDone := make(chan struct{})
	var stdin io.Reader
	if o.Stdin != nil {
		stdin = &eofNotifier{r: o.Stdin, done: stdinDone}
	}
	streamOpts := []cio.Opt{cio.WithStreams(stdin, orDiscard(o.Stdout), orDiscard(o.Stderr))}
	if o.TTY {
		streamOpts = append(streamOpts, cio.WithTerminal)
	}
	execID := "exec-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	p, err := task.Exec(ctx, execID, &proc, cio.NewCreator(streamOpts...))
	if err != nil {
		return 0, fmt.Errorf("exec: %w", err)
	}
	defer func() { _, _ = p.Delete(context.WithoutCancel(ctx), containerd.WithProcessKill) }()
	statusC, err := p.Wait(ctx)
	if err != nil {
		return 0, err
	}
	if err := p.Start(ctx); err != nil {
		return 0, fmt.Errorf("exec start: %w", err)
	}
	go func() {
		select {
		case <-stdinDone:
			_ = p.CloseIO(ctx, containerd.WithStdinCloser)
		case <-ctx.Done():
		}
	}()
	if o.TTY && o.Resize != nil {
		go func() {
			for {
				select {
				case size, ok := <-o.Resize:
					if !ok {
						return
					}
					_ = p.Resize(ctx, uint32(size.Width), uint32(size.Height))
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	select {
	case st := <-statusC:
		if io := p.IO(); io != nil {
			io.Wait()
		}
		code, _, err := st.Result()
		return int32(code), err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// eofNotifier closes done when its reader ends.
type eofNotifier struct {
	r    io.Reader
	done chan struct{}
	once sync.Once
}

func (e *eofNotifier) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.done) })
		if !errors.Is(err, io.EOF) {
			err = io.EOF
		}
	}
	return n, err
}
