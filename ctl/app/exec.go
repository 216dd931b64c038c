package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"skiff.dev/ctl/pkg/cli"
)

// ExecOptions are the flags of skiffctl exec.
type ExecOptions struct {
	Container         string
	Stdin             bool
	TTY               bool
	Quiet             bool
	PodRunningTimeout time.Duration
}

// NewExecCommand returns skiffctl exec.
func NewExecCommand(f *cli.Factory) *cobra.Command {
	o := &ExecOptions{PodRunningTimeout: time.Minute}
	cmd := &cobra.Command{
		Use:   "exec (POD | TYPE/NAME) [-c CONTAINER] [flags] -- COMMAND [args...]",
		Short: "Run a command in a container",
		Long: "exec runs a command in a container of a running pod, through the API server\n" +
			"and the pod's kubelet (WebSocket, or SPDY when the server has no WebSocket),\n" +
			"and exits with the command's exit code. TYPE/NAME picks a pod of a\n" +
			"Deployment, ReplicaSet, StatefulSet, DaemonSet, Job or Service.",
		Example: `  skiffctl exec web-7d9 -- date
  skiffctl exec -it deploy/web -c app -- sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 && len(args) > 1 {
				return fmt.Errorf("exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
			}
			if dash < 0 || dash == len(args) {
				return fmt.Errorf("you must specify at least one command for the container")
			}
			if dash != 1 {
				return fmt.Errorf("exec takes one POD or TYPE/NAME before -- COMMAND")
			}
			return o.Run(cmd.Context(), f, args[0], args[1:], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
		ValidArgsFunction: completeResources(f),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Container, "container", "c", "", "Container name. If omitted, the kubectl.kubernetes.io/default-container annotation, else the first container.")
	fs.BoolVarP(&o.Stdin, "stdin", "i", false, "Pass stdin to the container.")
	fs.BoolVarP(&o.TTY, "tty", "t", false, "Stdin is a TTY.")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "Only print output from the remote session.")
	fs.DurationVar(&o.PodRunningTimeout, "pod-running-timeout", o.PodRunningTimeout, "How long to wait until at least one pod is running (e.g. 5s, 2m).")
	return cmd
}

// Run execs command in the container and returns its exit code as an
// exitCodeError.
func (o *ExecOptions) Run(ctx context.Context, f *cli.Factory, target string, command []string, in io.Reader, out, errOut io.Writer) error {
	c, _, pod, err := targetPod(ctx, f, target, o.PodRunningTimeout)
	if err != nil {
		return err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return fmt.Errorf("cannot exec into a container in a completed pod; current phase is %s", pod.Status.Phase)
	}
	container, err := pickContainer(pod, o.Container, o.Quiet, errOut)
	if err != nil {
		return err
	}
	tty := o.TTY
	var stdinFile *os.File
	if tty {
		if file, ok := in.(*os.File); ok && o.Stdin && term.IsTerminal(int(file.Fd())) {
			stdinFile = file
		} else {
			if !o.Quiet {
				fmt.Fprintln(errOut, "Unable to use a TTY - input is not a terminal or the right kind of file")
			}
			tty = false
		}
	}
	if !o.Stdin {
		in = nil
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return err
	}
	req := c.CoreV1().RESTClient().Post().Resource("pods").Name(pod.Name).Namespace(pod.Namespace).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container, Command: command,
			Stdin: in != nil, Stdout: out != nil, Stderr: errOut != nil && !tty, TTY: tty,
		}, parameterCodec)
	err = stream(ctx, cfg, req.URL().String(), in, out, errOut, tty, stdinFile)
	var code utilexec.ExitError
	if errors.As(err, &code) {
		return exitCodeError{code}
	}
	return err
}

// stream runs an exec or attach request at url (WebSocket, else SPDY):
// stdin, stdout, and stderr unless there is a terminal; with stdinFile (a
// terminal) in raw mode, its size sent as it changes.
func stream(ctx context.Context, cfg *rest.Config, url string, in io.Reader, out, errOut io.Writer, tty bool, stdinFile *os.File) error {
	ex, err := streamExecutor(cfg, url)
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Stdin: in, Stdout: out, Tty: tty}
	if !tty {
		opts.Stderr = errOut
	}
	if stdinFile != nil {
		fd := int(stdinFile.Fd())
		state, err := term.MakeRaw(fd)
		if err != nil {
			return err
		}
		defer func() { _ = term.Restore(fd, state) }()
		sizes := newSizeQueue(ctx, fd)
		defer sizes.stop()
		opts.TerminalSizeQueue = sizes
	}
	return ex.StreamWithContext(ctx, opts)
}

// parameterCodec encodes PodExecOptions and PodPortForwardOptions as
// query parameters.
var parameterCodec = runtime.NewParameterCodec(execScheme())

func execScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	return s
}

// streamExecutor is kubectl's: WebSocket (v5 of the remote command
// protocol), falling back to SPDY when the upgrade fails.
func streamExecutor(cfg *rest.Config, url string) (remotecommand.Executor, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	if err != nil {
		return nil, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, url)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// exitCodeError is a remote command's non-zero exit: skiffctl prints
// "command terminated with exit code N" and exits with N, as kubectl.
type exitCodeError struct{ utilexec.ExitError }

func (e exitCodeError) KubectlLines() string { return e.Error() + "\n" }

// ExitStatus is the exit code skiffctl ends with.
func (e exitCodeError) ExitStatus() int { return e.ExitError.ExitStatus() }

// pickContainer is container, else the default-container annotation,
// else the first container, saying so when the pod has several.
func pickContainer(pod *corev1.Pod, container string, quiet bool, errOut io.Writer) (string, error) {
	if container != "" {
		for _, c := range pod.Spec.Containers {
			if c.Name == container {
				return container, nil
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if c.Name == container {
				return container, nil
			}
		}
		for _, c := range pod.Spec.EphemeralContainers {
			if c.Name == container {
				return container, nil
			}
		}
		return "", fmt.Errorf("container %s not found in pod %s", container, pod.Name)
	}
	if name := pod.Annotations["kubectl.kubernetes.io/default-container"]; name != "" {
		for _, c := range pod.Spec.Containers {
			if c.Name == name {
				return name, nil
			}
		}
		fmt.Fprintf(errOut, "Default container name %q not found in pod %s\n", name, pod.Name)
	}
	if len(pod.Spec.Containers) == 0 {
		return "", fmt.Errorf("pod %s has no containers", pod.Name)
	}
	if len(pod.Spec.Containers) > 1 && !quiet {
		names := make([]string, len(pod.Spec.Containers))
		for i, c := range pod.Spec.Containers {
			names[i] = c.Name
		}
		fmt.Fprintf(errOut, "Defaulted container %q out of: %s\n", names[0], strings.Join(names, ", "))
	}
	return pod.Spec.Containers[0].Name, nil
}

// targetPod is the client, the namespace and the pod of POD or TYPE/NAME.
func targetPod(ctx context.Context, f *cli.Factory, target string, timeout time.Duration) (*kubernetes.Clientset, string, *corev1.Pod, error) {
	c, err := f.Clientset()
	if err != nil {
		return nil, "", nil, err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, "", nil, err
	}
	pod, err := podFor(ctx, f, c, ns, target, timeout)
	return c, ns, pod, err
}

// podFor resolves POD, pod/NAME, or TYPE/NAME of an object with a pod
// selector to a pod, waiting up to timeout for one to be running.
func podFor(ctx context.Context, f *cli.Factory, c kubernetes.Interface, ns, target string, timeout time.Duration) (*corev1.Pod, error) {
	typ, name, ok := strings.Cut(target, "/")
	if !ok {
		typ, name = "pods", target
	}
	resolver, err := f.NewResolver()
	if err != nil {
		return nil, err
	}
	mapping, err := resolver.Mapping(typ)
	if err != nil {
		return nil, err
	}
	gvr := mapping.Resource
	if gvr.Group == "" && gvr.Resource == "pods" {
		return c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return nil, err
	}
	obj, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var sel labels.Selector
	if gvr.Resource == "services" {
		m, _, _ := unstructuredStringMap(obj.Object, "spec", "selector")
		if len(m) == 0 {
			return nil, fmt.Errorf("invalid service '%s': Service is defined without a selector", name)
		}
		sel = labels.SelectorFromSet(m)
	} else {
		raw, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
		if !found {
			return nil, fmt.Errorf("cannot attach to %s: selector for %s not implemented", obj.GetKind(), obj.GetKind())
		}
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
			return nil, err
		}
		if sel, err = metav1.LabelSelectorAsSelector(&ls); err != nil {
			return nil, err
		}
	}
	var pod *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return false, err
		}
		pods := l.Items
		sort.SliceStable(pods, func(i, j int) bool { return betterPod(&pods[i], &pods[j]) })
		if len(pods) > 0 && pods[0].Status.Phase == corev1.PodRunning {
			pod = &pods[0]
			return true, nil
		}
		return false, nil
	})
	if pod == nil {
		return nil, fmt.Errorf("timed out waiting for a running pod of %s: %v", target, err)
	}
	return pod, nil
}

// betterPod orders pods as kubectl picks one to attach to: running
// before pending, ready before not, then the oldest.
func betterPod(a, b *corev1.Pod) bool {
	if ra, rb := a.Status.Phase == corev1.PodRunning, b.Status.Phase == corev1.PodRunning; ra != rb {
		return ra
	}
	if ra, rb := podReady(a), podReady(b); ra != rb {
		return ra
	}
	return a.CreationTimestamp.Before(&b.CreationTimestamp)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func unstructuredStringMap(obj map[string]any, fields ...string) (map[string]string, bool, error) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = m[f]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, false, nil
	}
	out := map[string]string{}
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, true, fmt.Errorf("%s: %v is not a string", strings.Join(fields, "."), v)
		}
		out[k] = s
	}
	return out, true, nil
}

// sizeQueue sends the terminal's size first and on each SIGWINCH.
type sizeQueue struct {
	fd    int
	ch    chan os.Signal
	first bool
	done  chan struct{}
}

func newSizeQueue(ctx context.Context, fd int) *sizeQueue {
	q := &sizeQueue{fd: fd, ch: make(chan os.Signal, 1), first: true, done: make(chan struct{})}
	signal.Notify(q.ch, syscall.SIGWINCH)
	go func() {
		select {
		case <-ctx.Done():
		case <-q.done:
		}
	}()
	return q
}

func (q *sizeQueue) stop() {
	signal.Stop(q.ch)
	close(q.done)
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	if !q.first {
		select {
		case <-q.ch:
		case <-q.done:
			return nil
		}
	}
	q.first = false
	w, h, err := term.GetSize(q.fd)
	if err != nil {
		return nil
	}
	return &remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}
}
