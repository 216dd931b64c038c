// Package audit writes one JSON line per request, in the shape of
// upstream's audit.k8s.io/v1 Event at the Metadata level: who did what to
// which object, the response code and when. Request and response bodies are
// never written, so secrets' contents never reach the log. The file is
// rotated by size.
package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
)

// ObjectRef names the object of a request.
type ObjectRef struct {
	Resource    string `json:"resource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	APIGroup    string `json:"apiGroup,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// User is the requester.
type User struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// ResponseStatus carries the code.
type ResponseStatus struct {
	Code int `json:"code"`
}

// Event is one audit line.
type Event struct {
	Kind                     string            `json:"kind"`
	APIVersion               string            `json:"apiVersion"`
	Level                    string            `json:"level"`
	AuditID                  string            `json:"auditID"`
	Stage                    string            `json:"stage"`
	RequestURI               string            `json:"requestURI"`
	Verb                     string            `json:"verb"`
	User                     User              `json:"user"`
	ImpersonatedUser         *User             `json:"impersonatedUser,omitempty"`
	SourceIPs                []string          `json:"sourceIPs,omitempty"`
	UserAgent                string            `json:"userAgent,omitempty"`
	ObjectRef                *ObjectRef        `json:"objectRef,omitempty"`
	ResponseStatus           ResponseStatus    `json:"responseStatus"`
	RequestReceivedTimestamp time.Time         `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time         `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// Options configure the log file, as upstream's --audit-log-* flags.
type Options struct {
	Path       string
	MaxSizeMB  int
	MaxBackups int
	MaxAgeDays int
}

// Logger writes events; safe for concurrent use.
type Logger struct {
	mu  sync.Mutex
	out io.WriteCloser
}

// New opens the log; Path "-" is not supported (the log is a file).
func New(o Options) (*Logger, error) {
	if o.Path == "" {
		return nil, fmt.Errorf("audit log path is empty")
	}
	return &Logger{out: &lumberjack.Logger{Filename: o.Path, MaxSize: o.MaxSizeMB, MaxBackups: o.MaxBackups, MaxAge: o.MaxAgeDays}}, nil
}

// NewWriter logs to w (tests).
func NewWriter(w io.WriteCloser) *Logger { return &Logger{out: w} }

// Log writes one event as one line.
func (l *Logger) Log(ev *Event) error {
	ev.Kind, ev.APIVersion, ev.Level, ev.Stage = "Event", "audit.k8s.io/v1", "Metadata", "ResponseComplete"
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.out.Write(data)
	return err
}

// Close closes the file.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.Close()
}
