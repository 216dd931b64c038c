package admission

import (
	"context"
	"sync"
)

// Notes collect what admission adds to a request's response and audit
// line: warnings (the Warning header clients print) and audit annotations.
// The server puts one into each request's context (WithNotes); plugins add
// to it with AddWarning and AddAuditAnnotation.
type Notes struct {
	mu          sync.Mutex
	warnings    []string
	annotations map[string]string
}

type notesKey struct{}

// WithNotes returns ctx carrying a fresh Notes, and that Notes.
func WithNotes(ctx context.Context) (context.Context, *Notes) {
	n := &Notes{}
	return context.WithValue(ctx, notesKey{}, n), n
}

// NotesFrom returns the Notes of ctx, or nil.
func NotesFrom(ctx context.Context) *Notes {
	n, _ := ctx.Value(notesKey{}).(*Notes)
	return n
}

// AddWarning records a warning for the response (once per text). It is a
// no-op when ctx carries no Notes.
func AddWarning(ctx context.Context, msg string) {
	n := NotesFrom(ctx)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.warnings {
		if w == msg {
			return
		}
	}
	n.warnings = append(n.warnings, msg)
}

// AddAuditAnnotation records an annotation for the request's audit event.
// As upstream, the first value of a key wins.
func AddAuditAnnotation(ctx context.Context, key, value string) {
	n := NotesFrom(ctx)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.annotations == nil {
		n.annotations = map[string]string{}
	}
	if _, ok := n.annotations[key]; !ok {
		n.annotations[key] = value
	}
}

// TakeWarnings returns the warnings recorded so far and forgets them.
func (n *Notes) TakeWarnings() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.warnings
	n.warnings = nil
	return out
}

// AuditAnnotations returns a copy of the annotations recorded.
func (n *Notes) AuditAnnotations() map[string]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]string, len(n.annotations))
	for k, v := range n.annotations {
		out[k] = v
	}
	return out
}
