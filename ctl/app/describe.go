package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/describe"
)

// maxOwnerDepth bounds the owner chain that describe follows.
const maxOwnerDepth = 5

// DescribeOptions are the flags of skiffctl describe.
type DescribeOptions struct {
	Selector      string
	AllNamespaces bool
	ShowEvents    bool
	Files         []string
}

// NewDescribeCommand returns skiffctl describe.
func NewDescribeCommand(f *cli.Factory) *cobra.Command {
	o := &DescribeOptions{ShowEvents: true}
	cmd := &cobra.Command{
		Use:   "describe TYPE [NAME_PREFIX...] | TYPE/NAME | -f FILE",
		Short: "Show an object, the chain of its owners, and its Events",
		Long: "Show an object, the chain of its owners, and its Events. For a Pod, the path\n" +
			"it took: when it was scheduled, initialized and became ready. A name that is\n" +
			"not found is taken as a prefix, as kubectl does.",
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), args)
		},
		ValidArgsFunction: completeResources(f),
	}
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector.")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Across all namespaces.")
	cmd.Flags().BoolVar(&o.ShowEvents, "show-events", true, "Show the Events of the object.")
	cmd.Flags().StringSliceVarP(&o.Files, "filename", "f", nil, "Describe the objects of these manifests.")
	return cmd
}

// Run describes the objects of args.
func (o *DescribeOptions) Run(ctx context.Context, f *cli.Factory, in io.Reader, out io.Writer, args []string) error {
	objs, err := o.collect(ctx, f, in, args)
	if err != nil && len(objs) == 0 {
		return err
	}
	r, rerr := f.NewResolver()
	if rerr != nil {
		return rerr
	}
	dyn, derr := f.Dynamic()
	if derr != nil {
		return derr
	}
	cs, cerr := f.Clientset()
	if cerr != nil {
		return cerr
	}
	for i, obj := range objs {
		if i > 0 {
			fmt.Fprintln(out)
		}
		input := describe.Input{Object: obj, Now: time.Now(), Owners: ownerChain(ctx, r, dyn, obj),
			Controls: controlled(ctx, cs, obj)}
		if o.ShowEvents {
			input.Events = eventsFor(ctx, cs.CoreV1().Events(obj.GetNamespace()), obj)
		}
		if derr := describe.Describe(out, input); derr != nil {
			return derr
		}
	}
	return err
}

func (o *DescribeOptions) collect(ctx context.Context, f *cli.Factory, in io.Reader, args []string) ([]*unstructured.Unstructured, error) {
	dyn, err := f.Dynamic()
	if err != nil {
		return nil, err
	}
	if len(o.Files) > 0 {
		objs, err := readManifests(f, in, o.Files, false)
		if err != nil {
			return nil, err
		}
		var out []*unstructured.Unstructured
		var errs []error
		for _, m := range objs {
			live, err := resourceClient(dyn, m.Mapping, m.GetNamespace()).Get(ctx, m.GetName(), metav1.GetOptions{})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, live)
		}
		return out, errors.Join(errs...)
	}
	r, err := f.NewResolver()
	if err != nil {
		return nil, err
	}
	targets, err := r.Targets(args)
	if err != nil {
		return nil, err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	if o.AllNamespaces {
		ns = ""
	}
	var out []*unstructured.Unstructured
	var errs []error
	for _, t := range targets {
		rc := resourceClient(dyn, t.Mapping, ns)
		if len(t.Names) == 0 {
			list, err := rc.List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		for _, name := range t.Names {
			obj, err := rc.Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				out = append(out, obj)
				continue
			}
			if !isNotFound(err) {
				errs = append(errs, err)
				continue
			}
			matches, lerr := prefixMatches(ctx, rc, name)
			if lerr != nil || len(matches) == 0 {
				errs = append(errs, err)
				continue
			}
			out = append(out, matches...)
		}
	}
	return out, errors.Join(errs...)
}

func prefixMatches(ctx context.Context, rc interface {
	List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error)
}, prefix string) ([]*unstructured.Unstructured, error) {
	list, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		if strings.HasPrefix(list.Items[i].GetName(), prefix) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// ownerChain follows controller references upwards.
func ownerChain(ctx context.Context, r *cli.Resolver, dyn dynamicInterface, obj *unstructured.Unstructured) []describe.Owner {
	var chain []describe.Owner
	cur := obj
	for i := 0; i < maxOwnerDepth && cur != nil; i++ {
		ref := describe.ControllerOf(cur)
		if ref == nil {
			break
		}
		owner := describe.Owner{Kind: ref.Kind, Name: ref.Name}
		next, err := getOwner(ctx, r, dyn, cur.GetNamespace(), ref)
		if err != nil || next == nil {
			owner.Missing = err != nil && isNotFound(err)
			chain = append(chain, owner)
			break
		}
		if next.GetUID() != ref.UID {
			owner.Missing = true
			chain = append(chain, owner)
			break
		}
		chain = append(chain, owner)
		cur = next
	}
	return chain
}

func getOwner(ctx context.Context, r *cli.Resolver, dyn dynamicInterface, ns string, ref *metav1.OwnerReference) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	m, err := r.MappingForKind(gv.WithKind(ref.Kind))
	if err != nil {
		return nil, err
	}
	return resourceClient(dyn, m, ns).Get(ctx, ref.Name, metav1.GetOptions{})
}

// eventsFor lists the Events whose involved object is obj. Errors (such
// as a user not allowed to list events) leave the section empty.
func eventsFor(ctx context.Context, events interface {
	List(context.Context, metav1.ListOptions) (*corev1.EventList, error)
}, obj *unstructured.Unstructured) []corev1.Event {
	sel := fields.Set{
		"involvedObject.name": obj.GetName(),
		"involvedObject.uid":  string(obj.GetUID()),
	}
	if ns := obj.GetNamespace(); ns != "" {
		sel["involvedObject.namespace"] = ns
	}
	list, err := events.List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil
	}
	return list.Items
}

// controlled lists what a workload controls: a Deployment's ReplicaSets,
// the Pods of a ReplicaSet, StatefulSet, DaemonSet or Job.
func controlled(ctx context.Context, cs kubernetes.Interface, obj *unstructured.Unstructured) []string {
	gvk := obj.GroupVersionKind()
	var items []metav1.Object
	var kind string
	switch {
	case gvk.Group == "apps" && gvk.Kind == "Deployment":
		list, err := cs.AppsV1().ReplicaSets(obj.GetNamespace()).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
		kind = "ReplicaSet"
	case gvk.Group == "apps" && (gvk.Kind == "ReplicaSet" || gvk.Kind == "StatefulSet" || gvk.Kind == "DaemonSet"),
		gvk.Group == "batch" && gvk.Kind == "Job":
		list, err := cs.CoreV1().Pods(obj.GetNamespace()).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
		kind = "Pod"
	default:
		return nil
	}
	var out []string
	for _, it := range items {
		if ref := metav1.GetControllerOfNoCopy(it); ref != nil && ref.UID == obj.GetUID() {
			out = append(out, kind+"/"+it.GetName())
		}
	}
	sort.Strings(out)
	return out
}
