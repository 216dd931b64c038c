package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/logs"
	"skiff.dev/kubelet/pkg/pod"
)

// attachPollInterval is how often an attach looks for new output.
const attachPollInterval = 50 * time.Millisecond

// parseAttachQuery reads the streams an attach asks for: the exec
// parameters without a command.
func parseAttachQuery(r *http.Request) (execQuery, error) {
	q := r.URL.Query()
	flag := func(key string) bool {
		v, _ := strconv.ParseBool(q.Get(key))
		return v
	}
	aq := execQuery{stdin: flag("stdin"), stdout: flag("stdout"), stderr: flag("stderr"), tty: flag("tty")}
	switch {
	case !aq.stdin && !aq.stdout && !aq.stderr:
		return aq, fmt.Errorf("you must specify at least one of stdin, stdout, stderr")
	case aq.tty && aq.stderr:
		return aq, fmt.Errorf("stdout and stderr are merged with a tty; stderr must be false")
	}
	return aq, nil
}

// specContainer is the pod spec's container (init, app or ephemeral)
// called name.
func specContainer(p *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	if ec := pod.EphemeralContainer(p, name); ec != nil {
		return (*corev1.Container)(&ec.EphemeralContainerCommon)
	}
	return nil
}

// attach streams what a running container writes to its stdout and
// stderr from now on, over a WebSocket with exec's channels or over SPDY
// with exec's streams, until the container stops or the client goes
// away; with stdin, what the client sends goes to the container's stdin
// when its spec has stdin: true (and stdinOnce closes it when this
// client's input ends), and is dropped otherwise, as upstream.
//
// The output comes from the container's log file, which the logging
// driver writes line by line: a line reaches the client once it is
// complete (or 16 KiB long). With a tty, the terminal sizes the client
// sends resize the container's terminal (a container with tty: true).
func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	aq, err := parseAttachQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !isStreamUpgrade(r) {
		http.Error(w, "attach needs an upgrade: "+upgradeHelp, http.StatusBadRequest)
		return
	}
	p, c, err := s.runningContainer(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	var stdin io.WriteCloser
	if aq.stdin {
		if spec := specContainer(p, c.Name()); spec != nil && spec.Stdin {
			if stdin, err = s.o.Runtime.AttachStdin(r.Context(), c.ID); err != nil {
				writeErr(w, &errStatus{http.StatusBadRequest, fmt.Sprintf("attaching to the stdin of container %s: %v", c.Name(), err)})
				return
			}
		} else if !aq.stdout && !aq.stderr {
			http.Error(w, fmt.Sprintf("container %s was not created with stdin: true, and no output was asked for", c.Name()), http.StatusBadRequest)
			return
		}
	}
	path := filepath.Join(s.o.LogDir, string(p.UID), c.Name(), strconv.Itoa(c.Attempt())+".log")
	f, err := os.Open(path)
	if err != nil {
		writeErr(w, fmt.Errorf("opening the output of container %s: %w", c.Name(), err))
		return
	}
	defer f.Close()
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		writeErr(w, err)
		return
	}

	logger := klog.FromContext(r.Context()).WithValues("pod", klog.KObj(p), "container", c.Name())
	// The streams are those the client asked for, stdin included (an
	// SPDY client creates it), which goes to the container's stdin or is
	// read and dropped.
	cs, err := s.openStreams(w, r, aq)
	if err != nil {
		logger.V(2).Info("Opening the streams of an attach failed", "err", err)
		if stdin != nil {
			_ = stdin.Close()
		}
		return
	}
	defer cs.close()
	switch {
	case cs.stdin != nil && stdin != nil:
		go func() {
			_, _ = io.Copy(stdin, cs.stdin)
			_ = stdin.Close()
		}()
	case cs.stdin != nil:
		go func() { _, _ = io.Copy(io.Discard, cs.stdin) }()
	case stdin != nil:
		_ = stdin.Close()
	}
	ctx, cancel := cs.untilGone(r.Context())
	defer cancel()
	if cs.resize != nil {
		go s.resizeTerminal(ctx, c.ID, cs.resize, logger)
	}
	out := attachOutput{tty: aq.tty, stdout: cs.stdout, stderr: cs.stderr}
	alive := s.aliveCheck(ctx, p.UID, c.ID)
	err = followOutput(ctx, bufio.NewReader(f), out, alive, attachPollInterval)
	logger.V(2).Info("Attach finished", "err", err)
	st := metav1.Status{Status: metav1.StatusSuccess}
	if err != nil && ctx.Err() == nil {
		st = metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("Internal error occurred: error attaching to container: %v", err)}
	}
	cs.writeStatus(st)
}

// containerResizer is a runtime that resizes a container's terminal.
type containerResizer interface {
	ResizeContainer(ctx context.Context, id string, size pod.TerminalSize) error
}

// resizeTerminal applies each size of sizes to the terminal of container
// id until sizes ends; a container without a terminal keeps none, as
// upstream's (the sizes are read and dropped).
func (s *Server) resizeTerminal(ctx context.Context, id string, sizes <-chan pod.TerminalSize, logger klog.Logger) {
	rz, ok := s.o.Runtime.(containerResizer)
	for size := range sizes {
		if !ok {
			continue
		}
		if err := rz.ResizeContainer(ctx, id, size); err != nil {
			logger.V(2).Info("Resizing the terminal failed", "err", err)
			ok = false
		}
	}
}

// attachOutput routes log records to the client's streams; nil streams
// were not asked for. With a tty, stdout and stderr share stdout.
type attachOutput struct {
	stdout, stderr io.Writer
	tty            bool
}

func (o attachOutput) write(rec logs.Record) error {
	w := o.stdout
	if rec.Stream == logs.Stderr && !o.tty {
		w = o.stderr
	}
	if w == nil {
		return nil
	}
	b := rec.Content
	if !rec.Partial {
		b = append(b[:len(b):len(b)], '\n')
	}
	_, err := w.Write(b)
	return err
}

// followOutput writes each complete record of r to out, waiting for more
// until alive says the container stopped (after one last read), ctx
// ends, or a write fails.
func followOutput(ctx context.Context, r *bufio.Reader, out attachOutput, alive func() bool, interval time.Duration) error {
	var pending []byte
	last := false
	for {
		line, err := r.ReadBytes('\n')
		pending = append(pending, line...)
		if err == nil {
			if werr := out.write(logs.ParseRecord(bytes.TrimSuffix(pending, []byte{'\n'}))); werr != nil {
				return werr
			}
			pending = pending[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		if last {
			return nil
		}
		// One more pass after the container stopped: the driver may
		// have written its last lines meanwhile.
		last = !alive()
		if !last {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(interval):
			}
		}
	}
}
