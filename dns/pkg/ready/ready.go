// Package ready is skiff-dns's readiness plugin, registered under
// CoreDNS's name "ready" in its place: the same Corefile directive
// (`ready [ADDRESS]`) and HTTP endpoint (`/ready`, 200 or 503), but it
// asks every plugin of the server block that reports readiness on every
// request. CoreDNS's own plugin/ready stops asking a plugin once it has
// been ready, so a plugin that stops being ready (kubeapi, when the API
// server is unreachable) could never say so.
package ready

import (
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/pkg/reuseport"
	"github.com/coredns/coredns/plugin/pkg/uniq"
)

// Name is the plugin's name, CoreDNS's.
const Name = "ready"

// Readiness is CoreDNS's plugin/ready.Readiness: a plugin that says
// whether it is ready (the kubernetes plugin: once its informers synced).
type Readiness interface {
	Ready() bool
}

// Explainer is a Readiness that also says why it is not ready; /ready
// puts the reason after the plugin's name.
type Explainer interface {
	NotReadyReason() string
}

var (
	log      = clog.NewWithPlugin(Name)
	plugins  = &list{}
	uniqAddr = uniq.New()
)

func init() { plugin.Register(Name, setup) }

// list holds the plugins that report readiness. Unlike CoreDNS's, it
// keeps asking every one of them.
type list struct {
	mu    sync.RWMutex
	rs    []Readiness
	names []string
	// last is the answer of the previous check, to log changes only.
	last string
}

func (l *list) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rs, l.names = nil, nil
}

func (l *list) Append(r Readiness, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rs = append(l.rs, r)
	l.names = append(l.names, name)
}

// Ready asks every plugin; when one is not ready it returns false and a
// line per such plugin, in name order: the name, and the reason where the
// plugin gives one.
func (l *list) Ready() (bool, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var todo []string
	for i, r := range l.rs {
		if r.Ready() {
			continue
		}
		line := l.names[i]
		if e, ok := r.(Explainer); ok {
			if why := e.NotReadyReason(); why != "" {
				line += ": " + why
			}
		}
		todo = append(todo, line)
	}
	sort.Strings(todo)
	s := strings.Join(todo, "\n")
	if s != l.last {
		if s == "" {
			log.Infof("All plugins are ready")
		} else {
			log.Infof("Not ready: %q", s)
		}
		l.last = s
	}
	return len(todo) == 0, s
}

type ready struct {
	Addr string

	mu   sync.Mutex
	ln   net.Listener
	srv  *http.Server
	done bool
}

func (rd *ready) onStartup() error {
	ln, err := reuseport.Listen("tcp", rd.Addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	rd.mu.Lock()
	rd.ln, rd.srv, rd.done = ln, srv, true
	rd.mu.Unlock()

	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {
		rd.mu.Lock()
		done := rd.done
		rd.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !done {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "Shutting down")
			return
		}
		ok, todo := plugins.Ready()
		if ok {
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, http.StatusText(http.StatusOK))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, todo)
	})
	go func() { _ = srv.Serve(ln) }()
	return nil
}

func (rd *ready) onFinalShutdown() error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if !rd.done {
		return nil
	}
	uniqAddr.Unset(rd.Addr)
	rd.done = false
	// Close, unlike closing the listener, also ends kept-alive
	// connections, so a prober sees the server gone.
	return rd.srv.Close()
}

// setup is CoreDNS's: one listener per address, the list filled with the
// server block's readiness reporters at every (re)start.
func setup(c *caddy.Controller) error {
	addr, err := parse(c)
	if err != nil {
		return plugin.Error(Name, err)
	}
	rd := &ready{Addr: addr}
	uniqAddr.Set(addr, rd.onStartup)
	c.OnStartup(func() error { uniqAddr.Set(addr, rd.onStartup); return nil })
	c.OnRestartFailed(func() error { uniqAddr.Set(addr, rd.onStartup); return nil })
	c.OnStartup(func() error { return uniqAddr.ForEach() })
	c.OnRestartFailed(func() error { return uniqAddr.ForEach() })

	collect := func() {
		for _, p := range dnsserver.GetConfig(c).Handlers() {
			if r, ok := p.(Readiness); ok {
				plugins.Append(r, p.Name())
			}
		}
	}
	c.OnStartup(func() error { plugins.Reset(); collect(); return nil })
	c.OnRestartFailed(func() error { collect(); return nil })
	c.OnRestart(rd.onFinalShutdown)
	c.OnFinalShutdown(rd.onFinalShutdown)
	return nil
}

func parse(c *caddy.Controller) (string, error) {
	addr := ":8181"
	i := 0
	for c.Next() {
		if i > 0 {
			return "", plugin.ErrOnce
		}
		i++
		args := c.RemainingArgs()
		switch len(args) {
		case 0:
		case 1:
			addr = args[0]
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return "", err
			}
		default:
			return "", c.ArgErr()
		}
	}
	return addr, nil
}
