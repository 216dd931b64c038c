package logs

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// Stream names as they appear in a record.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// MaxLineSize is the longest content of one record; longer lines are
// split into partial (P) records, as containerd's CRI plugin does.
const MaxLineSize = 16 * 1024

// File serialises records of several streams into one log file.
type File struct {
	mu  sync.Mutex
	out io.Writer
	now func() time.Time
}

// NewFile returns a File writing to out.
func NewFile(out io.Writer) *File { return &File{out: out, now: time.Now} }

// Stream returns a writer that turns what is written to it into records
// of the named stream. Close flushes an unterminated last line as a
// partial record.
func (f *File) Stream(name string) io.WriteCloser { return &streamWriter{file: f, name: name} }

func (f *File) record(stream string, tag byte, content []byte) error {
	var b bytes.Buffer
	b.Grow(len(content) + 48)
	b.WriteString(f.now().UTC().Format(time.RFC3339Nano))
	b.WriteByte(' ')
	b.WriteString(stream)
	b.WriteByte(' ')
	b.WriteByte(tag)
	b.WriteByte(' ')
	b.Write(content)
	b.WriteByte('\n')
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.out.Write(b.Bytes())
	return err
}

type streamWriter struct {
	file *File
	name string
	buf  []byte
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		switch {
		case i >= 0 && i <= MaxLineSize:
			if err := w.file.record(w.name, 'F', w.buf[:i]); err != nil {
				return 0, err
			}
			w.buf = w.buf[i+1:]
		case len(w.buf) > MaxLineSize:
			if err := w.file.record(w.name, 'P', w.buf[:MaxLineSize]); err != nil {
				return 0, err
			}
			w.buf = w.buf[MaxLineSize:]
		default:
			w.buf = append([]byte(nil), w.buf...)
			return len(p), nil
		}
	}
}

func (w *streamWriter) Close() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.file.record(w.name, 'P', w.buf)
	w.buf = nil
	return err
}
