package namespace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"
)

// finalizerEstimateSeconds is how long upstream waits when content with
// finalizers remains.
const finalizerEstimateSeconds int64 = 15

// Deleter deletes a namespace's content and then finalizes it.
type Deleter struct {
	namespaces corev1client.NamespaceInterface
	metadata   metadata.Interface
	discovery  discovery.DiscoveryInterface
	pods       func(ns string) corev1client.PodInterface
}

// NewDeleter returns a Deleter.
func NewDeleter(namespaces corev1client.NamespaceInterface, md metadata.Interface, disco discovery.DiscoveryInterface) *Deleter {
	return &Deleter{namespaces: namespaces, metadata: md, discovery: disco}
}

// withPods lets the deleter estimate pods' graceful termination.
func (d *Deleter) withPods(pods func(ns string) corev1client.PodInterface) *Deleter {
	d.pods = pods
	return d
}

// Delete works on namespace name once: it deletes its content, and when
// none is left, removes the `kubernetes` finalizer. A
// *ResourcesRemainingError means: call again later.
func (d *Deleter) Delete(ctx context.Context, name string) error {
	ns, err := d.namespaces.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil || !hasFinalizer(ns) {
		return nil
	}
	estimate, err := d.deleteAllContent(ctx, ns)
	if err != nil {
		return err
	}
	if estimate > 0 {
		return &ResourcesRemainingError{Estimate: estimate}
	}
	return d.finalize(ctx, ns)
}

func hasFinalizer(ns *corev1.Namespace) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return true
		}
	}
	return false
}

// finalize removes the `kubernetes` finalizer through namespaces/finalize.
func (d *Deleter) finalize(ctx context.Context, ns *corev1.Namespace) error {
	out := ns.DeepCopy()
	out.Spec.Finalizers = nil
	for _, f := range ns.Spec.Finalizers {
		if f != corev1.FinalizerKubernetes {
			out.Spec.Finalizers = append(out.Spec.Finalizers, f)
		}
	}
	_, err := d.namespaces.Finalize(ctx, out, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finalizing namespace %s: %w", ns.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Finalized namespace", "namespace", ns.Name)
	return nil
}

// resource is one namespaced resource to empty.
type resource struct {
	gvr              schema.GroupVersionResource
	deleteCollection bool
}

// deletableResources are the namespaced resources with list and delete.
func (d *Deleter) deletableResources() ([]resource, error) {
	lists, discErr := discovery.ServerPreferredNamespacedResources(d.discovery)
	if discErr != nil && !discovery.IsGroupDiscoveryFailedError(discErr) {
		return nil, discErr
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists)
	var out []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			out = append(out, resource{gvr: gv.WithResource(r.Name), deleteCollection: hasVerb(r.Verbs, "deletecollection")})
		}
	}
	// Discovery's order is not stable: go by group and resource.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].gvr, out[j].gvr
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Resource < b.Resource
	})
	return out, discErr
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// contentStatus is what one pass found.
type contentStatus struct {
	discoveryErr error
	failures     []error
	remaining    map[string]int // group-resource -> instances left
	finalizers   map[string]int // finalizer -> instances that hold it
}

// deleteAllContent deletes every namespaced resource in ns and returns
// how many seconds what remains should take to go.
func (d *Deleter) deleteAllContent(ctx context.Context, ns *corev1.Namespace) (int64, error) {
	resources, discErr := d.deletableResources()
	if discErr != nil && resources == nil {
		st := contentStatus{discoveryErr: discErr}
		if err := d.updateConditions(ctx, ns.Name, st); err != nil {
			klog.FromContext(ctx).V(2).Info("Could not update the namespace's conditions", "namespace", ns.Name, "err", err)
		}
		return 0, discErr
	}
	st := contentStatus{discoveryErr: discErr, remaining: map[string]int{}, finalizers: map[string]int{}}
	var estimate int64
	for _, r := range resources {
		est, left, err := d.deleteAllContentFor(ctx, r, ns.Name)
		if err != nil {
			st.failures = append(st.failures, err)
		}
		estimate = max(estimate, est)
		if len(left) > 0 {
			st.remaining[r.gvr.GroupResource().String()] += len(left)
		}
		for _, item := range left {
			for _, f := range item.Finalizers {
				st.finalizers[f]++
			}
		}
	}
	if err := d.updateConditions(ctx, ns.Name, st); err != nil {
		klog.FromContext(ctx).V(2).Info("Could not update the namespace's conditions", "namespace", ns.Name, "err", err)
	}
	errs := append([]error{discErr}, st.failures...)
	if err := errors.Join(errs...); err != nil {
		return estimate, err
	}
	return estimate, nil
}

// deleteAllContentFor deletes the instances of one resource in ns and
// returns an estimate in seconds and what is left.
func (d *Deleter) deleteAllContentFor(ctx context.Context, r resource, ns string) (int64, []metav1.PartialObjectMetadata, error) {
	var estimate int64
	if r.gvr.Group == "" && r.gvr.Resource == "pods" {
		e, err := d.estimatePods(ctx, ns)
		if err != nil {
			return 0, nil, err
		}
		estimate = e
	}
	client := d.metadata.Resource(r.gvr).Namespace(ns)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	done := false
	if r.deleteCollection {
		err := client.DeleteCollection(ctx, opts, metav1.ListOptions{})
		switch {
		case err == nil:
			done = true
		case apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err):
			// Fall back to deleting one by one.
		default:
			return estimate, nil, fmt.Errorf("deleting the %s of namespace %s: %w", r.gvr.GroupResource(), ns, err)
		}
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		return estimate, nil, fmt.Errorf("listing the %s of namespace %s: %w", r.gvr.GroupResource(), ns, err)
	}
	if !done {
		for _, item := range list.Items {
			if item.DeletionTimestamp != nil {
				continue
			}
			if err := client.Delete(ctx, item.Name, opts); err != nil && !apierrors.IsNotFound(err) {
				return estimate, nil, fmt.Errorf("deleting %s %s/%s: %w", r.gvr.GroupResource(), ns, item.Name, err)
			}
		}
		if len(list.Items) > 0 {
			if list, err = client.List(ctx, metav1.ListOptions{}); err != nil {
				return estimate, nil, fmt.Errorf("listing the %s of namespace %s: %w", r.gvr.GroupResource(), ns, err)
			}
		}
	}
	if len(list.Items) == 0 {
		return 0, nil, nil
	}
	if estimate > 0 {
		return estimate, list.Items, nil
	}
	for _, item := range list.Items {
		if len(item.Finalizers) > 0 {
			return finalizerEstimateSeconds, list.Items, nil
		}
	}
	return estimate, list.Items, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns, r.gvr)
}

// estimatePods is the longest grace period of ns's pods that are not
// terminal, as upstream estimates it.
func (d *Deleter) estimatePods(ctx context.Context, ns string) (int64, error) {
	if d.pods == nil {
		return 0, nil
	}
	pods, err := d.pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	var estimate int64
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		if p.Spec.TerminationGracePeriodSeconds != nil {
			grace = *p.Spec.TerminationGracePeriodSeconds
		}
		if p.DeletionGracePeriodSeconds != nil {
			grace = *p.DeletionGracePeriodSeconds
		}
		estimate = max(estimate, grace)
	}
	return estimate, nil
}

// Condition reasons and messages, as upstream sets them.
const (
	reasonDiscoveryFailed     = "DiscoveryFailed"
	reasonResourcesDiscovered = "ResourcesDiscovered"
	reasonGVParsed            = "ParsedGroupVersions"
	reasonContentFailed       = "ContentDeletionFailed"
	reasonContentDeleted      = "ContentDeleted"
	reasonSomeRemain          = "SomeResourcesRemain"
	reasonContentRemoved      = "ContentRemoved"
	reasonFinalizersRemain    = "SomeFinalizersRemain"
	reasonNoFinalizers        = "ContentHasNoFinalizers"
)

// conditions are the namespace's deletion conditions for st.
func conditions(st contentStatus) []corev1.NamespaceCondition {
	cond := func(t corev1.NamespaceConditionType, ok bool, reasonTrue, msgTrue, reasonFalse, msgFalse string) corev1.NamespaceCondition {
		if ok {
			return corev1.NamespaceCondition{Type: t, Status: corev1.ConditionTrue, Reason: reasonTrue, Message: msgTrue}
		}
		return corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, Reason: reasonFalse, Message: msgFalse}
	}
	discMsg, failMsg := "", ""
	if st.discoveryErr != nil {
		var gd *discovery.ErrGroupDiscoveryFailed
		n := 1
		if errors.As(st.discoveryErr, &gd) {
			n = len(gd.Groups)
		}
		discMsg = fmt.Sprintf("Discovery failed for some groups, %d failing: %v", n, st.discoveryErr)
	}
	if len(st.failures) > 0 {
		failMsg = fmt.Sprintf("Failed to delete all resource types, %d remaining: %s", len(st.failures), aggregate(st.failures))
	}
	return []corev1.NamespaceCondition{
		cond(corev1.NamespaceDeletionDiscoveryFailure, st.discoveryErr != nil, reasonDiscoveryFailed, discMsg, reasonResourcesDiscovered, "All resources successfully discovered"),
		cond(corev1.NamespaceDeletionGVParsingFailure, false, "", "", reasonGVParsed, "All legacy kube types successfully parsed"),
		cond(corev1.NamespaceDeletionContentFailure, len(st.failures) > 0, reasonContentFailed, failMsg, reasonContentDeleted, "All content successfully deleted, may be waiting on finalization"),
		cond(corev1.NamespaceContentRemaining, len(st.remaining) > 0, reasonSomeRemain, "Some resources are remaining: "+countList(st.remaining, "%s has %d resource instances"),
			reasonContentRemoved, "All content successfully removed"),
		cond(corev1.NamespaceFinalizersRemaining, len(st.finalizers) > 0, reasonFinalizersRemain, "Some content in the namespace has finalizers remaining: "+countList(st.finalizers, "%s in %d resource instances"),
			reasonNoFinalizers, "All content-preserving finalizers finished"),
	}
}

// aggregate renders errors sorted, as upstream's aggregate error does.
func aggregate(errs []error) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	sort.Strings(msgs)
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func countList(m map[string]int, format string) string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf(format, k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// updateConditions writes the deletion conditions when they changed.
func (d *Deleter) updateConditions(ctx context.Context, name string, st contentStatus) error {
	ns, err := d.namespaces.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	out := ns.DeepCopy()
	changed := false
	now := metav1.Now()
	for _, c := range conditions(st) {
		i := conditionIndex(out.Status.Conditions, c.Type)
		if i < 0 {
			c.LastTransitionTime = now
			out.Status.Conditions = append(out.Status.Conditions, c)
			changed = true
			continue
		}
		old := out.Status.Conditions[i]
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			continue
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		out.Status.Conditions[i] = c
		changed = true
	}
	if !changed {
		return nil
	}
	_, err = d.namespaces.UpdateStatus(ctx, out, metav1.UpdateOptions{})
	return err
}

func conditionIndex(cs []corev1.NamespaceCondition, t corev1.NamespaceConditionType) int {
	for i := range cs {
		if cs[i].Type == t {
			return i
		}
	}
	return -1
}
