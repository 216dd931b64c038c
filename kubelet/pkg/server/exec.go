package server

import (
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/klog/v2"

	"skiff.dev/kubelet/pkg/pod"
)

// Channels of the exec protocols.
const (
	stdinChannel = iota
	stdoutChannel
	stderrChannel
	errorChannel
	resizeChannel
)

// Subprotocols that send the error channel's metav1.Status as JSON.
var statusProtocols = map[string]bool{
	"v5.channel.k8s.io": true, "v4.channel.k8s.io": true, "v4.base64.channel.k8s.io": true,
}

// execQuery is the query of an exec request.
type execQuery struct {
	cmd                        []string
	stdin, stdout, stderr, tty bool
}

func parseExecQuery(r *http.Request) (execQuery, error) {
	q := r.URL.Query()
	eq := execQuery{cmd: q["command"]}
	flag := func(key string) bool {
		v, _ := strconv.ParseBool(q.Get(key))
		return v
	}
	eq.stdin, eq.stdout, eq.stderr, eq.tty = flag("stdin"), flag("stdout"), flag("stderr"), flag("tty")
	switch {
	case len(eq.cmd) == 0:
		return eq, fmt.Errorf("command is required")
	case !eq.stdin && !eq.stdout && !eq.stderr:
		return eq, fmt.Errorf("you must specify at least one of stdin, stdout, stderr")
	case eq.tty && eq.stderr:
		return eq, fmt.Errorf("stdout and stderr are merged with a tty; stderr must be false")
	}
	return eq, nil
}

func channel(on bool, t wsstream.ChannelType) wsstream.ChannelType {
	if on {
		return t
	}
	return wsstream.IgnoreChannel
}

// execProtocols are the WebSocket subprotocols exec accepts.
func execProtocols(eq execQuery) map[string]wsstream.ChannelProtocolConfig {
	channels := []wsstream.ChannelType{
		stdinChannel:  channel(eq.stdin, wsstream.ReadChannel),
		stdoutChannel: channel(eq.stdout, wsstream.WriteChannel),
		stderrChannel: channel(eq.stderr, wsstream.WriteChannel),
		errorChannel:  wsstream.WriteChannel,
		resizeChannel: wsstream.ReadChannel,
	}
	binary := wsstream.ChannelProtocolConfig{Binary: true, Channels: channels}
	base64 := wsstream.ChannelProtocolConfig{Binary: false, Channels: channels}
	return map[string]wsstream.ChannelProtocolConfig{
		"":                         binary,
		"v5.channel.k8s.io":        binary,
		"v4.channel.k8s.io":        binary,
		"v4.base64.channel.k8s.io": base64,
		"channel.k8s.io":           binary,
		"base64.channel.k8s.io":    base64,
	}
}

// exec runs a command in a container over a WebSocket or SPDY.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	eq, err := parseExecQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !isStreamUpgrade(r) {
		http.Error(w, "exec needs an upgrade: "+upgradeHelp, http.StatusBadRequest)
		return
	}
	p, c, err := s.runningContainer(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	logger := klog.FromContext(r.Context()).WithValues("pod", klog.KObj(p), "container", c.Name())
	cs, err := s.openStreams(w, r, eq)
	if err != nil {
		logger.V(2).Info("Opening the streams of an exec failed", "err", err)
		return
	}
	defer cs.close()
	// A client that leaves ends the command.
	ctx, cancel := cs.untilGone(r.Context())
	defer cancel()
	opts := pod.ExecOptions{Cmd: eq.cmd, TTY: eq.tty, Stdin: cs.stdin, Stdout: cs.stdout, Stderr: cs.stderr, Resize: cs.resize}
	code, err := s.o.Runtime.ExecStream(ctx, c.ID, opts)
	logger.V(2).Info("Exec finished", "command", eq.cmd, "exitCode", code, "err", err)
	cs.writeStatus(execStatus(eq.cmd, code, err))
}

// execStatus is upstream's status of a finished exec: Success, or
// NonZeroExitCode with the code as an ExitCode cause, or an internal
// error.
func execStatus(cmd []string, code int32, err error) metav1.Status {
	switch {
	case err != nil:
		return metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("Internal error occurred: error executing command in container: %v", err),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Message: err.Error()}}}}
	case code != 0:
		return metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode",
			Message: fmt.Sprintf("command terminated with non-zero exit code: error executing command %v, exit code %d", cmd, code),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: strconv.Itoa(int(code))}}}}
	}
	return metav1.Status{Status: metav1.StatusSuccess}
}
