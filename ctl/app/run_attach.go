package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	utilexec "k8s.io/client-go/util/exec"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/drain"
)

// Validate checks the flags together, in kubectl run's order and with
// its messages. Attach must already hold its default (true with -i).
func (o *RunOptions) Validate() error {
	if o.TTY && !o.Stdin {
		return errors.New("-i/--stdin is required for containers with -t/--tty=true")
	}
	if o.Expose && o.Port == "" {
		return errors.New("--port must be set when exposing a service")
	}
	switch o.Restart {
	case "Always", "OnFailure", "Never":
	default:
		return fmt.Errorf("invalid restart policy: %s", o.Restart)
	}
	if !o.Attach && o.Remove {
		return errors.New("--rm should only be used for attached containers")
	}
	dry, err := drain.ParseDryRun(o.DryRun)
	if err != nil {
		return err
	}
	if o.Attach && dry != drain.DryRunNone {
		return errors.New("--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)")
	}
	if o.PodRunningTimeout <= 0 {
		return errors.New("--pod-running-timeout must be higher than zero")
	}
	return nil
}

// errPodCompleted is a pod that ended before it could be attached to.
var errPodCompleted = errors.New("pod ran to completion")

// RunAttached is kubectl run --attach (or -i): it creates the objects,
// waits for the pod to run, attaches to its container (its output, and
// with -i its stdin), falls back to its logs when it already ended or
// the attach fails, and with --restart=Never or OnFailure (and stdin
// closed after the first attach) waits for the pod to end and returns
// its container's exit code. --rm deletes what it created on the way
// out.
func (o *RunOptions) RunAttached(ctx context.Context, f *cli.Factory, name string, args []string, in io.Reader, out, errOut io.Writer) (err error) {
	pod, svc, c, err := o.create(ctx, f, name, args, out, true)
	if o.Remove && c != nil {
		defer func() {
			if rmErr := o.removeCreated(ctx, c, pod, svc, out); rmErr != nil && err == nil {
				err = rmErr
			}
		}()
	}
	if err != nil {
		return err
	}
	running, err := waitForPod(ctx, c, pod.Namespace, pod.Name, o.PodRunningTimeout, podRunningAndReady)
	if err != nil && !errors.Is(err, errPodCompleted) {
		return err
	}
	container := running.Spec.Containers[0].Name
	if running.Status.Phase == corev1.PodSucceeded || running.Status.Phase == corev1.PodFailed {
		if err := streamLogs(ctx, c, running, container, out); err != nil {
			return err
		}
	} else if err := o.attach(ctx, f, c, running, container, in, out, errOut); err != nil {
		fmt.Fprintf(errOut, "warning: couldn't attach to pod/%s, falling back to streaming logs: %v\n", pod.Name, err)
		if err := streamLogs(ctx, c, running, container, out); err != nil {
			return err
		}
	}
	if o.LeaveStdinOpen || (o.Restart != string(corev1.RestartPolicyNever) && o.Restart != string(corev1.RestartPolicyOnFailure)) {
		return nil
	}
	exit := podCompleted
	if o.Restart == string(corev1.RestartPolicyOnFailure) {
		exit = podSucceeded
	}
	done, err := waitForPod(ctx, c, pod.Namespace, pod.Name, o.PodRunningTimeout, exit)
	if err != nil {
		return err
	}
	return podExit(done)
}

// podExit is nil for a pod that succeeded, else the exit code of its
// container as kubectl run reports it.
func podExit(p *corev1.Pod) error {
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return nil
	case corev1.PodFailed:
		unknown := fmt.Errorf("pod %s/%s failed with unknown exit code", p.Namespace, p.Name)
		if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			return unknown
		}
		t := p.Status.ContainerStatuses[0].State.Terminated
		if t.ExitCode == 0 {
			return unknown
		}
		return runExitError{utilexec.CodeExitError{
			Err:  fmt.Errorf("pod %s/%s terminated (%s)\n%s", p.Namespace, p.Name, t.Reason, t.Message),
			Code: int(t.ExitCode),
		}}
	default:
		return fmt.Errorf("pod %s/%s left in phase %s", p.Namespace, p.Name, p.Status.Phase)
	}
}

// runExitError is printed as its message alone (kubectl prints an exit
// error without "error: ") and makes skiffctl exit with its code.
type runExitError struct{ utilexec.CodeExitError }

func (e runExitError) KubectlLines() string {
	msg := e.Error()
	if len(msg) == 0 || msg[len(msg)-1] != '\n' {
		msg += "\n"
	}
	return msg
}

// attach is kubectl attach to the container: stdout (and stderr without
// a terminal), with -i stdin, with -t the terminal in raw mode when stdin
// is one.
func (o *RunOptions) attach(ctx context.Context, f *cli.Factory, c kubernetes.Interface, pod *corev1.Pod, container string, in io.Reader, out, errOut io.Writer) error {
	tty := o.TTY
	if !o.Stdin {
		in, tty = nil, false
	}
	var stdinFile *os.File
	if tty {
		if file, ok := in.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
			stdinFile = file
		} else {
			if !o.Quiet {
				fmt.Fprintln(errOut, "Unable to use a TTY - input is not a terminal or the right kind of file")
			}
			tty = false
		}
	}
	if !o.Quiet {
		fmt.Fprintln(errOut, "If you don't see a command prompt, try pressing enter.")
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return err
	}
	req := c.CoreV1().RESTClient().Post().Resource("pods").Name(pod.Name).Namespace(pod.Namespace).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{
			Container: container, Stdin: in != nil, Stdout: true, Stderr: !tty, TTY: tty,
		}, parameterCodec)
	return stream(ctx, cfg, req.URL().String(), in, out, errOut, tty, stdinFile)
}

// streamLogs writes the container's whole log to out.
func streamLogs(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, container string, out io.Writer) error {
	rc, err := c.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(out, rc)
	return err
}

// removeCreated is --rm: the pod, then the Service, deleted without
// waiting, each reported as kubectl delete does; one already gone is
// not an error.
func (o *RunOptions) removeCreated(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, svc *corev1.Service, out io.Writer) error {
	// Also after an interrupt: the pod must not be left behind.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if pod != nil && pod.Name != "" {
		err := c.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && !o.Quiet {
			fmt.Fprintf(out, "pod %q deleted\n", pod.Name)
		}
	}
	if svc != nil && svc.Name != "" {
		err := c.CoreV1().Services(svc.Namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && !o.Quiet {
			fmt.Fprintf(out, "service %q deleted\n", svc.Name)
		}
	}
	return nil
}

// waitForPod watches the pod until cond holds or timeout passes, and
// returns it as last seen.
func waitForPod(ctx context.Context, c kubernetes.Interface, ns, name string, timeout time.Duration, cond watchtools.ConditionFunc) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
	ev, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, cond)
	var pod *corev1.Pod
	if ev != nil {
		pod, _ = ev.Object.(*corev1.Pod)
	}
	if errors.Is(err, errPodCompleted) && pod != nil {
		return pod, err
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || wait.Interrupted(err) {
			return nil, fmt.Errorf("timed out waiting for the condition on pods/%s", name)
		}
		return nil, err
	}
	return pod, nil
}

// podRunningAndReady is kubectl's: true once running and ready,
// errPodCompleted once it ended.
func podRunningAndReady(ev watch.Event) (bool, error) {
	if ev.Type == watch.Deleted {
		return false, errors.New("pod was deleted")
	}
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return false, nil
	}
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		return true, errPodCompleted
	case corev1.PodRunning:
		return podReady(p), nil
	}
	return false, nil
}

// podCompleted is true once the pod succeeded or failed.
func podCompleted(ev watch.Event) (bool, error) {
	if ev.Type == watch.Deleted {
		return false, errors.New("pod was deleted")
	}
	p, ok := ev.Object.(*corev1.Pod)
	return ok && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded), nil
}

// podSucceeded is true once the pod succeeded.
func podSucceeded(ev watch.Event) (bool, error) {
	if ev.Type == watch.Deleted {
		return false, errors.New("pod was deleted")
	}
	p, ok := ev.Object.(*corev1.Pod)
	return ok && p.Status.Phase == corev1.PodSucceeded, nil
}
