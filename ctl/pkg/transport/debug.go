package transport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Verbosity thresholds of the debugging output.
const (
	LevelURL     = 6
	LevelHeaders = 7
	LevelBodies  = 8
	LevelCurl    = 9
)

// maxBodyAtLevel8 is how much of a body is printed below LevelCurl.
const maxBodyAtLevel8 = 10 * 1024

// TLSFiles are the files a curl command needs to reach the server as the
// same user. Empty fields are left out of the command.
type TLSFiles struct {
	CAFile   string
	CertFile string
	KeyFile  string
	Insecure bool
}

// DebugRoundTripper writes what passes through it to Out, by Level.
type DebugRoundTripper struct {
	Next  http.RoundTripper
	Level int
	Out   io.Writer
	// TLS names the certificate files for the curl command.
	TLS TLSFiles
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
}

// Wrap returns rt wrapped by a DebugRoundTripper when level asks for any
// output, and rt itself otherwise.
func Wrap(rt http.RoundTripper, level int, out io.Writer, tls TLSFiles) http.RoundTripper {
	if level < LevelURL {
		return rt
	}
	return &DebugRoundTripper{Next: rt, Level: level, Out: out, TLS: tls}
}

func (d *DebugRoundTripper) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *DebugRoundTripper) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.Out, format, args...)
}

// RoundTrip logs req, sends it, and logs the response.
func (d *DebugRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	reqBody, err := peekRequestBody(req)
	if err != nil {
		return nil, err
	}
	if d.Level >= LevelCurl {
		d.printf("%s\n", CurlCommand(req, reqBody, d.TLS))
	}
	if d.Level >= LevelHeaders {
		d.printf("Request Headers:\n%s", formatHeaders(req.Header))
	}
	if d.Level >= LevelBodies && len(reqBody) > 0 {
		d.printf("Request Body: %s\n", d.truncate(reqBody))
	}
	start := d.now()
	resp, err := d.Next.RoundTrip(req)
	ms := d.now().Sub(start).Milliseconds()
	if err != nil {
		d.printf("%s %s failed in %d milliseconds: %v\n", req.Method, req.URL, ms, err)
		return resp, err
	}
	d.printf("%s %s %s in %d milliseconds\n", req.Method, req.URL, resp.Status, ms)
	if d.Level >= LevelHeaders {
		d.printf("Response Headers:\n%s", formatHeaders(resp.Header))
	}
	if d.Level >= LevelBodies && !isStream(req, resp) {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		d.printf("Response Body: %s\n", d.truncate(body))
	}
	return resp, nil
}

// isStream reports a watch or a followed log, whose body never ends.
func isStream(req *http.Request, resp *http.Response) bool {
	q := req.URL.Query()
	_ = resp
	return q.Get("watch") == "true" || q.Get("watch") == "1" || q.Get("follow") == "true"
}

func (d *DebugRoundTripper) truncate(b []byte) string {
	b = bytes.TrimRight(b, "\n")
	if d.Level < LevelCurl && len(b) > maxBodyAtLevel8 {
		return string(b[:maxBodyAtLevel8]) + fmt.Sprintf(" [truncated %d chars]", len(b)-maxBodyAtLevel8)
	}
	return string(b)
}

func peekRequestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return body, nil
}

func formatHeaders(h http.Header) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range h[k] {
			if strings.EqualFold(k, "Authorization") {
				v = maskAuthorization(v)
			}
			fmt.Fprintf(&b, "    %s: %s\n", k, v)
		}
	}
	return b.String()
}

func maskAuthorization(v string) string {
	scheme, _, ok := strings.Cut(v, " ")
	if !ok {
		return "<masked>"
	}
	return scheme + " <masked>"
}

// CurlCommand renders req as a curl command line. The bearer token, if
// any, is masked as kubectl masks it; client certificates are passed as
// files.
func CurlCommand(req *http.Request, body []byte, tls TLSFiles) string {
	var b strings.Builder
	fmt.Fprintf(&b, "curl -v -X%s", req.Method)
	if tls.Insecure {
		b.WriteString(" -k")
	}
	for _, f := range []struct{ flag, path string }{
		{"--cacert", tls.CAFile}, {"--cert", tls.CertFile}, {"--key", tls.KeyFile},
	} {
		if f.path != "" {
			fmt.Fprintf(&b, " %s %s", f.flag, shellQuote(f.path))
		}
	}
	keys := make([]string, 0, len(req.Header))
	for k := range req.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range req.Header[k] {
			if strings.EqualFold(k, "Authorization") {
				v = maskAuthorization(v)
			}
			fmt.Fprintf(&b, " -H %s", shellQuote(k+": "+v))
		}
	}
	if body = bytes.TrimRight(body, "\n"); len(body) > 0 {
		fmt.Fprintf(&b, " --data-binary %s", shellQuote(string(body)))
	}
	fmt.Fprintf(&b, " '%s'", strings.ReplaceAll(req.URL.String(), "'", `'\''`))
	return b.String()
}

// shellQuote quotes s for a POSIX shell with single quotes.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// MaterializePEM returns a path to a file holding data, written once under
// dir (created with mode 0700) with a name derived from the content, mode
// 0600. It lets a curl command use certificates that the kubeconfig
// embeds.
func MaterializePEM(dir, suffix string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	path := filepath.Join(dir, hex.EncodeToString(sum[:8])+suffix)
	if existing, err := os.ReadFile(path); err == nil && bytes.Equal(existing, data) {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}
