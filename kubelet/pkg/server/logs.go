package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"skiff.dev/kubelet/pkg/logs"
	"skiff.dev/kubelet/pkg/pod"
)

// logQuery is the query of a containerLogs request, as upstream's
// PodLogOptions.
type logQuery struct {
	previous bool
	opts     logs.Options
}

func parseLogQuery(q url.Values, now time.Time) (logQuery, error) {
	lq := logQuery{opts: logs.Options{TailLines: -1}}
	var err error
	boolean := func(key string) bool {
		if err != nil || q.Get(key) == "" {
			return false
		}
		var v bool
		v, err = strconv.ParseBool(q.Get(key))
		if err != nil {
			err = fmt.Errorf("%s: %q is not a boolean", key, q.Get(key))
		}
		return v
	}
	integer := func(key string, min int64) (int64, bool) {
		if err != nil || q.Get(key) == "" {
			return 0, false
		}
		v, perr := strconv.ParseInt(q.Get(key), 10, 64)
		if perr != nil || v < min {
			err = fmt.Errorf("%s: %q must be an integer of at least %d", key, q.Get(key), min)
			return 0, false
		}
		return v, true
	}
	lq.opts.Follow = boolean("follow")
	lq.previous = boolean("previous")
	lq.opts.Timestamps = boolean("timestamps")
	if v, ok := integer("tailLines", 0); ok {
		lq.opts.TailLines = v
	}
	if v, ok := integer("limitBytes", 1); ok {
		lq.opts.LimitBytes = v
	}
	if v, ok := integer("sinceSeconds", 1); ok {
		lq.opts.Since = now.Add(-time.Duration(v) * time.Second)
	}
	if s := q.Get("sinceTime"); s != "" && err == nil {
		if q.Get("sinceSeconds") != "" {
			return lq, fmt.Errorf("at most one of sinceTime and sinceSeconds may be given")
		}
		t, perr := time.Parse(time.RFC3339, s)
		if perr != nil {
			return lq, fmt.Errorf("sinceTime: %q is not an RFC 3339 time", s)
		}
		lq.opts.Since = t
	}
	if lq.previous && lq.opts.Follow {
		// As upstream: a previous container's log is complete.
		lq.opts.Follow = false
	}
	return lq, err
}

// containerLogs serves a container's log.
func (s *Server) containerLogs(w http.ResponseWriter, r *http.Request) {
	lq, err := parseLogQuery(r.URL.Query(), time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p, err := s.lookupPod(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	name := r.PathValue("container")
	if !specHas(p, name) {
		http.Error(w, fmt.Sprintf("container %s is not valid for pod %s", name, p.Name), http.StatusBadRequest)
		return
	}
	cs, err := s.containers(r.Context(), p, name)
	if err != nil {
		writeErr(w, err)
		return
	}
	var c pod.Container
	switch {
	case lq.previous && len(cs) < 2:
		http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", name, p.Name), http.StatusBadRequest)
		return
	case lq.previous:
		c = cs[1]
	case len(cs) == 0:
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", name, p.Name), http.StatusBadRequest)
		return
	default:
		c = cs[0]
	}
	path := filepath.Join(s.o.LogDir, string(p.UID), name, strconv.Itoa(c.Attempt())+".log")
	lq.opts.Alive = s.aliveCheck(r.Context(), p.UID, c.ID)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := logs.Read(r.Context(), path, flushWriter{w}, lq.opts); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Headers may be out already; the error ends the body.
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// aliveCheck says whether container id still runs, asking the runtime at
// most twice a second.
func (s *Server) aliveCheck(ctx context.Context, uid types.UID, id string) func() bool {
	var last time.Time
	alive := true
	return func() bool {
		if time.Since(last) < 500*time.Millisecond {
			return alive
		}
		last = time.Now()
		all, err := s.o.Runtime.ListContainers(ctx, uid)
		if err != nil {
			return alive
		}
		alive = false
		for _, c := range all {
			if c.ID == id && c.State == pod.StateRunning {
				alive = true
			}
		}
		return alive
	}
}

// flushWriter flushes after each write so a follow reaches the client
// at once.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	_ = http.NewResponseController(f.w).Flush()
	return n, err
}
