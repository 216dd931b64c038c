package logs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// Options select what Read returns, as upstream's PodLogOptions.
type Options struct {
	// Follow keeps reading new records until Alive says the container
	// stopped or the context ends.
	Follow bool
	// TailLines, when not negative, starts with the last lines of the file.
	TailLines int64
	// Since skips records older than this time (zero: none).
	Since time.Time
	// Timestamps prefixes each line with its RFC3339Nano time.
	Timestamps bool
	// LimitBytes, when positive, stops after that many bytes of output.
	LimitBytes int64
	// Alive says whether the container still runs; Follow ends once it
	// does not and the file is read to its end. Nil: always alive.
	Alive func() bool
	// PollInterval is how often a follow checks for new records
	// (default 100 ms).
	PollInterval time.Duration
}

// Record is one parsed line of a log file.
type Record struct {
	Time    time.Time
	Stream  string
	Partial bool
	Content []byte
}

// ParseRecord parses one line (without its newline). A line that is not a
// CRI record is returned whole as a full stdout record without a time.
func ParseRecord(line []byte) Record {
	parts := bytes.SplitN(line, []byte{' '}, 4)
	if len(parts) == 4 && len(parts[2]) == 1 && (parts[2][0] == 'F' || parts[2][0] == 'P') {
		if t, err := time.Parse(time.RFC3339Nano, string(parts[0])); err == nil {
			return Record{Time: t, Stream: string(parts[1]), Partial: parts[2][0] == 'P', Content: parts[3]}
		}
	}
	return Record{Stream: Stdout, Content: line}
}

var errLimit = errors.New("byte limit reached")

// Read writes the log file at path to w as opts say.
func Read(ctx context.Context, path string, w io.Writer, opts Options) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if opts.TailLines >= 0 {
		off, err := tailOffset(f, opts.TailLines)
		if err != nil {
			return err
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
	}
	out := &output{w: w, opts: opts, lineStart: true}
	if opts.LimitBytes > 0 {
		out.left = opts.LimitBytes
	}
	err = follow(ctx, bufio.NewReader(f), out, opts)
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

// follow emits every complete line of r, then, when following, waits for
// more until the container stops.
func follow(ctx context.Context, r *bufio.Reader, out *output, opts Options) error {
	interval := opts.PollInterval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	var pending []byte
	for {
		line, err := r.ReadBytes('\n')
		pending = append(pending, line...)
		if err == nil {
			if werr := out.emit(ParseRecord(pending[:len(pending)-1])); werr != nil {
				return werr
			}
			pending = pending[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		if !opts.Follow {
			return nil
		}
		if opts.Alive != nil && !opts.Alive() {
			// One more pass: the driver may have written the last lines
			// between the read above and the check.
			opts.Alive = func() bool { return false }
			opts.Follow = false
		}
		if opts.Follow {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(interval):
			}
		}
	}
}

type output struct {
	w         io.Writer
	opts      Options
	left      int64
	lineStart bool
}

func (o *output) emit(rec Record) error {
	if !o.opts.Since.IsZero() && !rec.Time.IsZero() && rec.Time.Before(o.opts.Since) {
		return nil
	}
	var b []byte
	if o.opts.Timestamps && o.lineStart {
		b = append(b, rec.Time.Format(time.RFC3339Nano)...)
		b = append(b, ' ')
	}
	b = append(b, rec.Content...)
	if !rec.Partial {
		b = append(b, '\n')
	}
	o.lineStart = !rec.Partial
	if o.opts.LimitBytes > 0 {
		if int64(len(b)) >= o.left {
			_, err := o.w.Write(b[:o.left])
			if err != nil {
				return err
			}
			return errLimit
		}
		o.left -= int64(len(b))
	}
	_, err := o.w.Write(b)
	return err
}

// tailOffset is where the last n lines of f begin (a line is a run of
// partial records ended by a full one).
func tailOffset(f *os.File, n int64) (int64, error) {
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return int64(len(data)), nil
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	var lines int64
	for i := end; i >= 0; i-- {
		if i > 0 && data[i-1] != '\n' {
			continue
		}
		// data[i:] starts a record.
		rec := data[i:]
		if j := bytes.IndexByte(rec, '\n'); j >= 0 {
			rec = rec[:j]
		}
		if !ParseRecord(rec).Partial {
			lines++
		}
		if lines > n {
			j := bytes.IndexByte(data[i:], '\n')
			return int64(i + j + 1), nil
		}
	}
	return 0, nil
}
