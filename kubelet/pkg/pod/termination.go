package pod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/kubelet/pkg/logs"
)

// Limits of a termination message, as upstream's: the file's last 4096
// bytes; from the log, its last 80 lines, at most 2048 bytes of them.
const (
	MaxTerminationMessageLength    = 4096
	MaxTerminationMessageLogLines  = 80
	MaxTerminationMessageLogLength = 2048
)

// Labels a container carries for its termination message: the host file
// bind-mounted at its terminationMessagePath, and its log file.
const (
	LabelTerminationMessagePath = "skiff.dev/termination-message-path"
	LabelLogPath                = "skiff.dev/log-path"
)

// terminationFile creates the host file that is bind-mounted at the
// container's terminationMessagePath: <dir>/<pod uid>/containers/<name>/<id>,
// writable by any user (the container may not run as root), as upstream.
func terminationFile(dir string, pod *corev1.Pod, name, id string) (string, error) {
	p := filepath.Join(dir, string(pod.UID), "containers", name, id[:12])
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o666)
	if err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return p, os.Chmod(p, 0o666)
}

// ReadTerminationMessages reads, once per exited container, its
// termination message into s.TerminationMessages: the file the container
// wrote at its terminationMessagePath, or, under FallbackToLogsOnError,
// the end of its log when the file is empty and the container failed.
func (s *State) ReadTerminationMessages(ctx context.Context) {
	if s.TerminationMessages == nil {
		s.TerminationMessages = map[string]string{}
	}
	// Containers removed since (older attempts) are forgotten.
	for id := range s.TerminationMessages {
		if !slices.ContainsFunc(s.Containers, func(c Container) bool { return c.ID == id }) {
			delete(s.TerminationMessages, id)
		}
	}
	for _, c := range s.Containers {
		if c.State != StateExited {
			continue
		}
		if _, ok := s.TerminationMessages[c.ID]; ok {
			continue
		}
		spec := containerNamed(s.Pod, c.Name())
		if spec == nil {
			continue
		}
		s.TerminationMessages[c.ID] = terminationMessage(ctx, c, spec)
	}
}

func terminationMessage(ctx context.Context, c Container, spec *corev1.Container) string {
	fallback := spec.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError && c.ExitCode != 0
	var msg string
	if p := c.Labels[LabelTerminationMessagePath]; p != "" {
		data, err := readAtMost(p, MaxTerminationMessageLength)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Sprintf("Error on reading termination log %s: %v", p, err)
		default:
			msg = string(data)
		}
	}
	if msg != "" || !fallback {
		return msg
	}
	p := c.Labels[LabelLogPath]
	if p == "" {
		return ""
	}
	var buf bytes.Buffer
	err := logs.Read(ctx, p, &buf, logs.Options{TailLines: MaxTerminationMessageLogLines, LimitBytes: MaxTerminationMessageLogLength})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return buf.String()
}

// readAtMost reads the last max bytes of a file.
func readAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if size := fi.Size(); size > max {
		if _, err := f.Seek(size-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}
