package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The messages are kubectl's, so scripts that read them keep working.
const (
	daemonSetFatal      = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
	daemonSetWarning    = "ignoring DaemonSet-managed Pods"
	localStorageFatal   = "Pods with local storage (use --delete-emptydir-data to override)"
	localStorageWarning = "deleting Pods with local storage"
	unmanagedFatal      = "cannot delete Pods that declare no controller (use --force to override)"
	unmanagedWarning    = "deleting Pods that declare no controller"
)

// Verdict is what the filters decided for one pod.
type Verdict struct {
	// Delete is whether the pod is evicted or deleted.
	Delete bool
	// Kind is one of Okay, Skip, Warning, Error.
	Kind string
	// Message explains a Warning or an Error.
	Message string
}

// The kinds of Verdict.
const (
	Okay    = "Okay"
	Skip    = "Skip"
	Warning = "Warning"
	Error   = "Error"
)

func okay() Verdict                        { return Verdict{Delete: true, Kind: Okay} }
func skip() Verdict                        { return Verdict{Kind: Skip} }
func warning(del bool, msg string) Verdict { return Verdict{Delete: del, Kind: Warning, Message: msg} }
func fatal(msg string) Verdict             { return Verdict{Kind: Error, Message: msg} }
func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
func controllerKind(p *corev1.Pod) *metav1.OwnerReference { return metav1.GetControllerOf(p) }

// PodVerdict is one pod of the node and its verdict.
type PodVerdict struct {
	Pod     corev1.Pod
	Verdict Verdict
}

// List is the node's pods with their verdicts.
type List struct{ Items []PodVerdict }

// Pods are the pods to evict or delete.
func (l *List) Pods() []corev1.Pod {
	var out []corev1.Pod
	for _, i := range l.Items {
		if i.Verdict.Delete {
			out = append(out, i.Pod)
		}
	}
	return out
}

// group gathers "ns/name" of the pods with verdicts of kind, by message,
// in the order of the messages.
func (l *List) group(kind string) (msgs []string, pods map[string][]string) {
	pods = map[string][]string{}
	for _, i := range l.Items {
		if i.Verdict.Kind != kind {
			continue
		}
		msg := i.Verdict.Message
		if msg == "" {
			msg = "unexpected error"
		}
		if _, seen := pods[msg]; !seen {
			msgs = append(msgs, msg)
		}
		pods[msg] = append(pods[msg], i.Pod.Namespace+"/"+i.Pod.Name)
	}
	sort.Strings(msgs)
	return msgs, pods
}

// Warnings is kubectl's warning line: "message: ns/a, ns/b; message: ...".
func (l *List) Warnings() string {
	msgs, pods := l.group(Warning)
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		parts = append(parts, fmt.Sprintf("%s: %s", m, strings.Join(pods[m], ", ")))
	}
	return strings.Join(parts, "; ")
}

// Errors are the reasons the node cannot be drained, one per message.
func (l *List) Errors() []error {
	msgs, pods := l.group(Error)
	errs := make([]error, 0, len(msgs))
	for _, m := range msgs {
		errs = append(errs, fmt.Errorf("cannot delete %s: %s", m, strings.Join(pods[m], ", ")))
	}
	return errs
}

// filters are applied in kubectl's order; the first that does not let
// the pod be deleted decides.
func (h *Helper) filters() []func(context.Context, *corev1.Pod) Verdict {
	return []func(context.Context, *corev1.Pod) Verdict{
		h.skipDeleted, h.daemonSet, mirror, h.localStorage, h.unreplicated,
	}
}

// skipDeleted skips pods deleted longer ago than SkipWaitForDeleteTimeoutSeconds.
func (h *Helper) skipDeleted(_ context.Context, p *corev1.Pod) Verdict {
	if deletedLongAgo(p, h.SkipWaitForDeleteTimeoutSeconds) {
		return skip()
	}
	return okay()
}

func deletedLongAgo(p *corev1.Pod, seconds int) bool {
	return seconds > 0 && p.DeletionTimestamp != nil &&
		int(time.Since(p.DeletionTimestamp.Time).Seconds()) > seconds
}

// daemonSet refuses DaemonSet pods, or leaves them with a warning under
// IgnoreAllDaemonSets: the DaemonSet controller ignores unschedulable and
// would put them back. An orphan whose DaemonSet is gone goes under Force.
func (h *Helper) daemonSet(ctx context.Context, p *corev1.Pod) Verdict {
	ref := controllerKind(p)
	if ref == nil || ref.Kind != "DaemonSet" || finished(p) {
		return okay()
	}
	if _, err := h.Client.AppsV1().DaemonSets(p.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) && h.Force {
			return warning(true, err.Error())
		}
		return fatal(err.Error())
	}
	if !h.IgnoreAllDaemonSets {
		return fatal(daemonSetFatal)
	}
	return warning(false, daemonSetWarning)
}

// mirror skips the API's copies of static pods: the kubelet owns them.
func mirror(_ context.Context, p *corev1.Pod) Verdict {
	if _, ok := p.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return skip()
	}
	return okay()
}

// localStorage refuses running pods with emptyDir volumes, whose data
// goes with them, unless DeleteEmptyDirData.
func (h *Helper) localStorage(_ context.Context, p *corev1.Pod) Verdict {
	has := false
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			has = true
		}
	}
	if !has || finished(p) {
		return okay()
	}
	if !h.DeleteEmptyDirData {
		return fatal(localStorageFatal)
	}
	return warning(true, localStorageWarning)
}

// unreplicated refuses running pods with no controller, which nothing
// would recreate, unless Force.
func (h *Helper) unreplicated(_ context.Context, p *corev1.Pod) Verdict {
	if finished(p) || controllerKind(p) != nil {
		return okay()
	}
	if h.Force {
		return warning(true, unmanagedWarning)
	}
	return fatal(unmanagedFatal)
}
