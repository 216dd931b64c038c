package endpoints

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/kubeletclient"
	"skiff.dev/apiserver/pkg/registry"
)

// DefaultContainerAnnotation names the container kubectl picks when a pod
// has several and none is asked for; the API server honours it too.
const DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// maxErrorBody bounds how much of a kubelet's error answer is quoted.
const maxErrorBody = 1024

// podContainer chooses the container a log, exec or attach request is for:
// the one named, else the annotation's default, else the only one. The
// errors are upstream's (ValidateContainer).
func podContainer(pod *corev1.Pod, name string) (string, error) {
	if name == "" {
		name = pod.Annotations[DefaultContainerAnnotation]
		if name != "" && !hasContainer(pod, name) {
			name = ""
		}
	}
	if name != "" {
		if !hasContainer(pod, name) {
			return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
		}
		return name, nil
	}
	switch len(pod.Spec.Containers) {
	case 1:
		return pod.Spec.Containers[0].Name, nil
	case 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
	}
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names))
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// queryBool reads a boolean query parameter as upstream's conversion does:
// absent is false, "false" and "0" are false, any other value is true.
func queryBool(q url.Values, key string) bool {
	v, ok := q[key]
	if !ok || len(v) == 0 {
		return false
	}
	switch strings.ToLower(v[0]) {
	case "false", "0":
		return false
	}
	return true
}

func queryInt(q url.Values, key string) (*int64, error) {
	v := q.Get(key)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: %q is not an integer", key, v))
	}
	return &n, nil
}

// parseLogOptions reads upstream's PodLogOptions from a query and
// validates them as upstream's ValidatePodLogOptions.
func parseLogOptions(q url.Values) (*corev1.PodLogOptions, error) {
	opts := &corev1.PodLogOptions{
		Container: q.Get("container"), Follow: queryBool(q, "follow"), Previous: queryBool(q, "previous"),
		Timestamps: queryBool(q, "timestamps"), InsecureSkipTLSVerifyBackend: queryBool(q, "insecureSkipTLSVerifyBackend"),
	}
	var err error
	if opts.SinceSeconds, err = queryInt(q, "sinceSeconds"); err != nil {
		return nil, err
	}
	if opts.TailLines, err = queryInt(q, "tailLines"); err != nil {
		return nil, err
	}
	if opts.LimitBytes, err = queryInt(q, "limitBytes"); err != nil {
		return nil, err
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("sinceTime: %q is not an RFC 3339 time", v))
		}
		mt := metav1.NewTime(t)
		opts.SinceTime = &mt
	}
	var errs field.ErrorList
	if opts.TailLines != nil && *opts.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *opts.TailLines, "must be greater than or equal to 0"))
	}
	if opts.LimitBytes != nil && *opts.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *opts.LimitBytes, "must be greater than 0"))
	}
	if opts.SinceSeconds != nil && opts.SinceTime != nil {
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	}
	if opts.SinceSeconds != nil && *opts.SinceSeconds < 1 {
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *opts.SinceSeconds, "must be greater than 0"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, "", errs)
	}
	return opts, nil
}

// logQuery is the kubelet's /containerLogs query for opts, as upstream's
// LogLocation builds it.
func logQuery(opts *corev1.PodLogOptions) url.Values {
	q := url.Values{}
	if opts.Follow {
		q.Set("follow", "true")
	}
	if opts.Previous {
		q.Set("previous", "true")
	}
	if opts.Timestamps {
		q.Set("timestamps", "true")
	}
	if opts.SinceSeconds != nil {
		q.Set("sinceSeconds", strconv.FormatInt(*opts.SinceSeconds, 10))
	}
	if opts.SinceTime != nil {
		q.Set("sinceTime", opts.SinceTime.UTC().Format(time.RFC3339))
	}
	if opts.TailLines != nil {
		q.Set("tailLines", strconv.FormatInt(*opts.TailLines, 10))
	}
	if opts.LimitBytes != nil {
		q.Set("limitBytes", strconv.FormatInt(*opts.LimitBytes, 10))
	}
	return q
}

// streamQuery is the kubelet's query for exec, attach and port-forward,
// from the admitted options, as upstream's streamParams. Exec and attach
// carry the streams twice: upstream's names (input, output, error, tty set
// to "1"), which the upstream kubelet reads, and the names clients send
// (stdin, stdout, stderr), so that a kubelet reading either understands
// it. Port-forward's ports are the kubelet's port parameter.
func streamQuery(opts runtime.Object) url.Values {
	out := url.Values{}
	streams := func(stdin, stdout, stderr, tty bool) {
		for _, s := range []struct {
			on              bool
			client, kubelet string
		}{
			{stdin, "stdin", corev1.ExecStdinParam}, {stdout, "stdout", corev1.ExecStdoutParam}, {stderr, "stderr", corev1.ExecStderrParam},
		} {
			if s.on {
				out.Set(s.kubelet, "1")
				out.Set(s.client, "1")
			}
		}
		if tty {
			out.Set(corev1.ExecTTYParam, "1")
		}
	}
	switch o := opts.(type) {
	case *corev1.PodExecOptions:
		streams(o.Stdin, o.Stdout, o.Stderr, o.TTY)
		if len(o.Command) > 0 {
			out[corev1.ExecCommandParam] = o.Command
		}
	case *corev1.PodAttachOptions:
		streams(o.Stdin, o.Stdout, o.Stderr, o.TTY)
	case *corev1.PodPortForwardOptions:
		if len(o.Ports) > 0 {
			ports := make([]string, len(o.Ports))
			for i, p := range o.Ports {
				ports[i] = strconv.FormatInt(int64(p), 10)
			}
			out.Set(corev1.PortHeader, strings.Join(ports, ","))
		}
	}
	return out
}

// podAndNode reads the pod and the node it is bound to. A pod without a
// node is upstream's 400.
func (h *Handler) podAndNode(ctx context.Context, s *registry.Store, ns, name string) (*corev1.Pod, *corev1.Node, error) {
	obj, err := s.Get(ctx, ns, name)
	if err != nil {
		return nil, nil, err
	}
	pod := obj.(*corev1.Pod)
	if pod.Spec.NodeName == "" {
		return pod, nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	nodes := h.stores[corev1.SchemeGroupVersion.WithResource("nodes")]
	if nodes == nil {
		return pod, nil, apierrors.NewInternalError(errors.New("no node storage"))
	}
	nobj, err := nodes.Get(ctx, "", pod.Spec.NodeName)
	if err != nil {
		if registry.IsNotFound(err) {
			return pod, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, pod.Spec.NodeName)
		}
		return pod, nil, err
	}
	return pod, nobj.(*corev1.Node), nil
}

func (h *Handler) kubelet() (*kubeletclient.Client, error) {
	if h.Kubelet == nil {
		return nil, apierrors.NewServiceUnavailable("the API server has no kubelet client configured")
	}
	return h.Kubelet, nil
}

// logWebSocketProtocols are the WebSocket subprotocols pods/log speaks,
// as upstream's wsstream.NewDefaultReaderProtocols.
var logWebSocketProtocols = []string{"binary.k8s.io", "base64.binary.k8s.io"}

// checkLogWebSocket refuses a WebSocket request for a log that offers
// subprotocols, none of them one pods/log speaks (offering none is
// binary.k8s.io).
func checkLogWebSocket(r *http.Request) error {
	var offered []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				offered = append(offered, p)
			}
		}
	}
	if len(offered) == 0 || slices.ContainsFunc(offered, func(p string) bool { return slices.Contains(logWebSocketProtocols, p) }) {
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("unsupported WebSocket subprotocols %v: pods/log speaks %s", offered, strings.Join(logWebSocketProtocols, ", ")))
}

// podLog serves GET pods/{name}/log: the container's log, streamed from
// the kubelet of the pod's node (flushed as it comes when following),
// over plain HTTP or, when the client asks for one, a WebSocket.
func (h *Handler) podLog(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name string) {
	gr := schema.GroupResource{Resource: "pods/log"}
	opts, err := parseLogOptions(r.URL.Query())
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	websocket := wsstream.IsWebSocketRequest(r)
	if websocket {
		if err := checkLogWebSocket(r); err != nil {
			h.writeError(w, r, err, gr, name)
			return
		}
	}
	kc, err := h.kubelet()
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	pod, node, err := h.podAndNode(r.Context(), s, ns, name)
	if err == nil {
		opts.Container, err = podContainer(pod, opts.Container)
	}
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), name)
		return
	}
	loc, err := kc.Location(node, fmt.Sprintf("/containerLogs/%s/%s/%s", ns, name, opts.Container), logQuery(opts))
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, loc.String(), nil)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	resp, err := kc.Transport(opts.InsecureSkipTLSVerifyBackend).RoundTrip(req)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		h.writeError(w, r, kubeletError(resp.StatusCode, strings.TrimSpace(string(body)), gr, name), gr, name)
		return
	}
	if websocket {
		// Upstream's StreamObject: an empty message, then the log as
		// binary messages (binary.k8s.io, or no subprotocol) or base64
		// text messages (base64.binary.k8s.io).
		ws := wsstream.NewReader(&errorAfterData{r: resp.Body}, true, wsstream.NewDefaultReaderProtocols())
		if err := ws.Copy(w, r); err != nil {
			klog.FromContext(r.Context()).V(2).Info("log stream over WebSocket ended", "pod", klog.KRef(ns, name), "err", err)
		}
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	if err := copyStream(w, resp.Body, opts.Follow); err != nil && r.Context().Err() == nil {
		klog.FromContext(r.Context()).V(2).Info("log stream ended", "pod", klog.KRef(ns, name), "err", err)
	}
}

// errorAfterData is r, except that a read that returns data and an error
// returns the data alone, and the error on the next read: wsstream's
// Reader drops data that comes with io.EOF, as a kubelet's last read of
// a short log does.
type errorAfterData struct {
	r   io.Reader
	err error
}

func (e *errorAfterData) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.r.Read(p)
	if n > 0 && err != nil {
		e.err, err = err, nil
	}
	return n, err
}

// kubeletError is upstream's GenericHttpResponseChecker: a kubelet's 400
// and 500 carry its text; other codes keep their code and a generic message.
func kubeletError(code int, text string, gr schema.GroupResource, name string) error {
	switch code {
	case http.StatusBadRequest:
		return apierrors.NewBadRequest(text)
	case http.StatusInternalServerError:
		return apierrors.NewInternalError(errors.New(text))
	}
	return apierrors.NewGenericServerResponse(code, "", gr, name, text, 0, false)
}

// copyStream copies src to w, flushing after every read when flush is set.
func copyStream(w http.ResponseWriter, src io.Reader, flush bool) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if flush {
				_ = rc.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// isUpgrade reports whether r asks to switch protocols.
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return r.Header.Get("Upgrade") != ""
			}
		}
	}
	return false
}

// upgradeProxy proxies a request, and the connection it upgrades to, to
// loc. The upgrade passes through unchanged: its Connection and Upgrade
// headers (websocket, or SPDY/3.1), the WebSocket key, version and
// subprotocols (v5.channel.k8s.io, SPDY/3.1+portforward.k8s.io, ...) and
// X-Stream-Protocol-Version; after the kubelet's 101 and its headers,
// bytes are copied both ways. The client's credentials are dropped.
func upgradeProxy(loc *url.URL, rt http.RoundTripper, onError func(http.ResponseWriter, *http.Request, error)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = loc
			pr.Out.Host = loc.Host
			// The client's credentials are for the API server, not the
			// kubelet, which trusts the API server's own certificate.
			pr.Out.Header.Del("Authorization")
			for k := range pr.Out.Header {
				if strings.HasPrefix(k, "Impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler:  onError,
	}
}

// podConnect serves pods/{name}/exec, attach and portforward: the options
// pass admission (operation CONNECT), then an upgraded connection is
// proxied, byte for byte after the 101, to the kubelet of the pod's node.
// The client's subprotocol negotiation passes through.
func (h *Handler) podConnect(w http.ResponseWriter, r *http.Request, s *registry.Store, ns, name, sub string) {
	gr := schema.GroupResource{Resource: "pods/" + sub}
	opts, err := h.admittedConnectOptions(r, s, sub, ns, name, "", false)
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	kc, err := h.kubelet()
	if err != nil {
		h.writeError(w, r, err, gr, name)
		return
	}
	pod, node, err := h.podAndNode(r.Context(), s, ns, name)
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), name)
		return
	}
	var path string
	switch o := opts.(type) {
	case *corev1.PodExecOptions:
		if path, err = streamPath(pod, sub, o.Container); err == nil && len(o.Command) == 0 {
			err = apierrors.NewBadRequest("you must specify at least one command for the container")
		}
	case *corev1.PodAttachOptions:
		path, err = streamPath(pod, sub, o.Container)
	case *corev1.PodPortForwardOptions:
		path = fmt.Sprintf("/portForward/%s/%s", ns, name)
	default:
		err = apierrors.NewInternalError(fmt.Errorf("invalid options object: %T", opts))
	}
	if err != nil {
		h.writeError(w, r, err, s.R.GroupResource(), name)
		return
	}
	if !isUpgrade(r) {
		h.writeError(w, r, apierrors.NewBadRequest("Upgrade request required"), gr, name)
		return
	}
	loc, err := kc.Location(node, path, streamQuery(opts))
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err), gr, name)
		return
	}
	logger := klog.FromContext(r.Context())
	proxy := upgradeProxy(loc, kc.Transport(false), func(w http.ResponseWriter, req *http.Request, err error) {
		logger.V(2).Info("proxying to the kubelet failed", "pod", klog.KRef(ns, name), "subresource", sub, "err", err)
		h.writeError(w, req, apierrors.NewInternalError(fmt.Errorf("error dialing backend: %w", err)), gr, name)
	})
	proxy.ServeHTTP(w, r)
}

// streamPath is the kubelet's path for exec or attach in a container of
// pod: the one asked for, or the default (podContainer).
func streamPath(pod *corev1.Pod, sub, container string) (string, error) {
	container, err := podContainer(pod, container)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("/%s/%s/%s/%s", sub, pod.Namespace, pod.Name, container), nil
}
