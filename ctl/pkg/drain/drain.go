package drain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// DryRun is --dry-run: "none", "client" or "server".
type DryRun string

// The --dry-run strategies.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// ParseDryRun reads --dry-run as kubectl 1.32 does: none, client or
// server; a bare --dry-run (DryRunNoValue) and booleans are deprecated
// forms of client and none, with kubectl's warning logged.
func ParseDryRun(s string) (DryRun, error) {
	if b, err := strconv.ParseBool(s); err == nil {
		d, name := DryRunNone, "none"
		if b {
			d, name = DryRunClient, "client"
		}
		klog.Warningf(`--dry-run=%v is deprecated (boolean value) and can be replaced with --dry-run=%s.`, s, name)
		return d, nil
	}
	switch s {
	case DryRunNoValue:
		klog.Warning(`--dry-run is deprecated and can be replaced with --dry-run=client.`)
		return DryRunClient, nil
	case "", "none":
		return DryRunNone, nil
	case "client":
		return DryRunClient, nil
	case "server":
		return DryRunServer, nil
	}
	return "", fmt.Errorf(`Invalid dry-run value (%v). Must be "none", "server", or "client".`, s)
}

// DryRunNoValue is --dry-run's value when given bare.
const DryRunNoValue = "unchanged"

// Suffix is what kubectl appends to an operation's line under dry run.
func (d DryRun) Suffix() string {
	switch d {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// retryInterval is how long a refused eviction (429) waits, as kubectl.
const retryInterval = 5 * time.Second

// pollInterval is how often the pods being evicted are looked at.
const pollInterval = time.Second

// Helper drains nodes; its fields are kubectl drain's flags.
type Helper struct {
	Client kubernetes.Interface
	// Force evicts pods that declare no controller.
	Force bool
	// GracePeriodSeconds is each pod's grace period; negative keeps the pod's.
	GracePeriodSeconds int
	// IgnoreAllDaemonSets leaves DaemonSet pods where they are instead of refusing.
	IgnoreAllDaemonSets bool
	// Timeout bounds the whole eviction; zero waits forever.
	Timeout time.Duration
	// DeleteEmptyDirData evicts pods with emptyDir volumes.
	DeleteEmptyDirData bool
	// PodSelector narrows the node's pods by label.
	PodSelector string
	// ChunkSize is the page size of the pod list.
	ChunkSize int64
	// DisableEviction deletes pods instead of evicting them: no budget is checked.
	DisableEviction bool
	// SkipWaitForDeleteTimeoutSeconds leaves pods deleted longer ago alone.
	SkipWaitForDeleteTimeoutSeconds int
	DryRun                          DryRun
	// Out gets a line per pod; ErrOut the retries.
	Out, ErrOut io.Writer
	// RetryInterval overrides retryInterval (tests).
	RetryInterval time.Duration
}

// PodsForDeletion lists the node's pods and runs the filters over them;
// the errors say why the node cannot be drained.
func (h *Helper) PodsForDeletion(ctx context.Context, node string) (*List, []error) {
	sel, err := labels.Parse(h.PodSelector)
	if err != nil {
		return nil, []error{err}
	}
	opts := metav1.ListOptions{
		LabelSelector: sel.String(),
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
		Limit:         h.ChunkSize,
	}
	var pods []corev1.Pod
	for {
		l, err := h.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, []error{err}
		}
		pods = append(pods, l.Items...)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	list := &List{}
	for i := range pods {
		p := &pods[i]
		var v Verdict
		for _, filter := range h.filters() {
			if v = filter(ctx, p); !v.Delete {
				break
			}
		}
		p.Kind, p.APIVersion = "Pod", "v1"
		list.Items = append(list.Items, PodVerdict{Pod: *p, Verdict: v})
	}
	if errs := list.Errors(); len(errs) > 0 {
		return list, errs
	}
	return list, nil
}

func (h *Helper) deleteOptions() metav1.DeleteOptions {
	o := metav1.DeleteOptions{}
	if h.GracePeriodSeconds >= 0 {
		g := int64(h.GracePeriodSeconds)
		o.GracePeriodSeconds = &g
	}
	if h.DryRun == DryRunServer {
		o.DryRun = []string{metav1.DryRunAll}
	}
	return o
}

// evictionSupported asks discovery whether the server serves
// pods/eviction as policy/v1, as kubectl does before evicting.
func (h *Helper) evictionSupported() (bool, error) {
	l, err := h.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		return false, err
	}
	for _, r := range l.APIResources {
		if r.Name == "pods/eviction" && r.Kind == "Eviction" && r.Group == "policy" && r.Version == "v1" {
			return true, nil
		}
	}
	return false, nil
}

// DeleteOrEvict evicts pods (or deletes them with DisableEviction or
// when the server has no eviction) and waits until they are gone.
// done is called for each pod gone with whether eviction was used.
func (h *Helper) DeleteOrEvict(ctx context.Context, pods []corev1.Pod, done func(p *corev1.Pod, evicted bool)) error {
	if len(pods) == 0 {
		return nil
	}
	if !h.DisableEviction {
		ok, err := h.evictionSupported()
		if err != nil {
			return err
		}
		if ok {
			return h.evict(ctx, pods, done)
		}
	}
	return h.delete(ctx, pods, done)
}

func (h *Helper) timeoutCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if h.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, h.Timeout)
}

// evict evicts every pod at once, each retrying while the budget refuses
// (429) until Timeout, then waits for each to be gone.
func (h *Helper) evict(parent context.Context, pods []corev1.Pod, done func(*corev1.Pod, bool)) error {
	ctx, cancel := h.timeoutCtx(parent)
	defer cancel()
	retry := h.RetryInterval
	if retry <= 0 {
		retry = retryInterval
	}
	errc := make(chan error, len(pods))
	for i := range pods {
		go func(pod *corev1.Pod) { errc <- h.evictOne(ctx, pod, retry, done) }(&pods[i])
	}
	var errs []error
	for range pods {
		if err := <-errc; err != nil {
			errs = append(errs, err)
		}
	}
	return Aggregate(errs)
}

func (h *Helper) globalTimeout(ctx context.Context, parent error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("global timeout reached: %v", h.Timeout)
	}
	return parent
}

func (h *Helper) evictOne(ctx context.Context, pod *corev1.Pod, retry time.Duration, done func(*corev1.Pod, bool)) error {
	opts := h.deleteOptions()
	for {
		if h.DryRun == DryRunServer {
			fmt.Fprintf(h.Out, "evicting pod %s/%s (server dry run)\n", pod.Namespace, pod.Name)
		} else {
			fmt.Fprintf(h.Out, "evicting pod %s/%s\n", pod.Namespace, pod.Name)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("error when evicting pods/%q -n %q: %v", pod.Name, pod.Namespace, h.globalTimeout(ctx, ctx.Err()))
		}
		ev := &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			DeleteOptions: &opts,
		}
		err := h.Client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev)
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsTooManyRequests(err):
			fmt.Fprintf(h.ErrOut, "error when evicting pods/%q -n %q (will retry after %v): %v\n", pod.Name, pod.Namespace, retry, err)
			sleep(ctx, retry)
			continue
		case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			if pod.DeletionTimestamp == nil {
				fmt.Fprintf(h.ErrOut, "error when evicting pod %q from terminating namespace %q (will retry after %v): %v\n", pod.Name, pod.Namespace, retry, err)
				sleep(ctx, retry)
				continue
			}
		default:
			return fmt.Errorf("error when evicting pods/%q -n %q: %v", pod.Name, pod.Namespace, h.globalTimeout(ctx, err))
		}
		break
	}
	if h.DryRun == DryRunServer {
		return nil
	}
	if err := h.waitGone(ctx, []corev1.Pod{*pod}, true, done); err != nil {
		return fmt.Errorf("error when waiting for pod %q in namespace %q to terminate: %v", pod.Name, pod.Namespace, err)
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// delete deletes every pod, then waits for them all.
func (h *Helper) delete(parent context.Context, pods []corev1.Pod, done func(*corev1.Pod, bool)) error {
	ctx, cancel := h.timeoutCtx(parent)
	defer cancel()
	for _, p := range pods {
		err := h.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, h.deleteOptions())
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if h.DryRun == DryRunServer {
		return nil
	}
	return h.waitGone(ctx, pods, false, done)
}

// waitGone polls until each pod is gone or replaced by another of the
// same name (another UID).
func (h *Helper) waitGone(ctx context.Context, pods []corev1.Pod, evicted bool, done func(*corev1.Pod, bool)) error {
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		var pending []corev1.Pod
		for i := range pods {
			p := &pods[i]
			cur, err := h.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err) || (err == nil && cur.UID != p.UID):
				if done != nil {
					done(p, evicted)
				}
			case err != nil:
				return false, err
			case deletedLongAgo(cur, h.SkipWaitForDeleteTimeoutSeconds):
				fmt.Fprintf(h.Out, "pod %q has DeletionTimestamp older than %v seconds, skipping\n", p.Name, h.SkipWaitForDeleteTimeoutSeconds)
			default:
				pending = append(pending, *p)
			}
		}
		pods = pending
		return len(pods) == 0, nil
	})
	if err != nil && ctx.Err() != nil {
		return h.globalTimeout(ctx, err)
	}
	return err
}

// Cordon sets node.spec.unschedulable to desired with a strategic merge
// patch, server-side dry run if asked. changed is false when the node
// was already so, in which case nothing is sent.
func Cordon(ctx context.Context, c kubernetes.Interface, node *corev1.Node, desired bool, dryRun DryRun) (changed bool, err error) {
	if node.Spec.Unschedulable == desired {
		return false, nil
	}
	if dryRun == DryRunClient {
		return true, nil
	}
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, desired)
	if !desired {
		patch = `{"spec":{"unschedulable":null}}`
	}
	opts := metav1.PatchOptions{}
	if dryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = c.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, []byte(patch), opts)
	return true, err
}

// aggregateError prints as apimachinery's utilerrors.Aggregate, as
// kubectl's messages do: one error as itself, several as "[a, b]".
type aggregateError []error

func (a aggregateError) Error() string {
	if len(a) == 1 {
		return a[0].Error()
	}
	msgs := make([]string, len(a))
	for i, e := range a {
		msgs[i] = e.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func (a aggregateError) Unwrap() []error { return a }

// Aggregate joins errs as kubectl does; nil when there are none.
func Aggregate(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return aggregateError(errs)
}
