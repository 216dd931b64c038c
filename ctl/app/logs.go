package app

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/ctl/pkg/cli"
)

// LogsOptions are the flags of skiffctl logs.
type LogsOptions struct {
	Container    string
	Follow       bool
	Tail         int64
	Previous     bool
	Timestamps   bool
	Since        time.Duration
	LimitBytes   int64
	AllContainer bool
}

// NewLogsCommand returns skiffctl logs.
func NewLogsCommand(f *cli.Factory) *cobra.Command {
	o := &LogsOptions{Tail: -1}
	cmd := &cobra.Command{
		Use:   "logs (POD | TYPE/NAME) [-c CONTAINER]",
		Short: "Print a container's log (served by the pod's kubelet through the API server)",
		Example: `  skiffctl logs nginx
  skiffctl logs deploy/web -c app --tail 20 -f
  skiffctl logs nginx --previous`,
		Args: exactArgs(1, "logs needs one pod: POD or TYPE/NAME (e.g. deploy/web)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
		ValidArgsFunction: completeResources(f),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Container, "container", "c", "", "The container (default: the pod's only or first container).")
	fs.BoolVarP(&o.Follow, "follow", "f", false, "Keep streaming the log.")
	fs.Int64Var(&o.Tail, "tail", o.Tail, "Only the last N lines (-1: all).")
	fs.BoolVarP(&o.Previous, "previous", "p", false, "The log of the previous, terminated instance of the container.")
	fs.BoolVar(&o.Timestamps, "timestamps", false, "Prefix each line with its time.")
	fs.DurationVar(&o.Since, "since", 0, "Only lines newer than this (e.g. 5m).")
	fs.Int64Var(&o.LimitBytes, "limit-bytes", 0, "At most this many bytes.")
	fs.BoolVar(&o.AllContainer, "all-containers", false, "The logs of every container of the pod, one after the other.")
	return cmd
}

// PodLogOptions returns the query of GET pods/NAME/log.
func (o *LogsOptions) PodLogOptions(container string) *corev1.PodLogOptions {
	opts := &corev1.PodLogOptions{Container: container, Follow: o.Follow, Previous: o.Previous, Timestamps: o.Timestamps}
	if o.Tail >= 0 {
		t := o.Tail
		opts.TailLines = &t
	}
	if o.Since > 0 {
		s := int64(o.Since.Round(time.Second).Seconds())
		opts.SinceSeconds = &s
	}
	if o.LimitBytes > 0 {
		l := o.LimitBytes
		opts.LimitBytes = &l
	}
	return opts
}

// Run streams the log of the pod arg names.
func (o *LogsOptions) Run(ctx context.Context, f *cli.Factory, out, errOut io.Writer, arg string) error {
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	cs, err := f.Clientset()
	if err != nil {
		return err
	}
	pod, err := o.resolvePod(ctx, f, cs, ns, arg)
	if err != nil {
		return err
	}
	containers := []string{o.Container}
	if o.AllContainer {
		containers = nil
		for _, c := range pod.Spec.Containers {
			containers = append(containers, c.Name)
		}
	} else if o.Container == "" {
		c, err := defaultContainer(pod, errOut)
		if err != nil {
			return err
		}
		containers = []string{c}
	}
	for _, c := range containers {
		if err := o.stream(ctx, cs, pod, c, out); err != nil {
			return err
		}
	}
	return nil
}

func (o *LogsOptions) stream(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, container string, out io.Writer) error {
	rc, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, o.PodLogOptions(container)).Stream(ctx)
	if err != nil {
		if isNotFound(err) {
			err = fmt.Errorf("%w (the pod exists: the API server does not serve its log; logs come from the kubelet of the pod's node, node %q)", err, pod.Spec.NodeName)
		}
		return fmt.Errorf("reading the log of pod %s/%s container %q: %w", pod.Namespace, pod.Name, container, err)
	}
	defer rc.Close()
	_, err = io.Copy(out, rc)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// defaultContainer picks the container as kubectl does: the
// kubectl.kubernetes.io/default-container annotation, else the first, with
// a note when there are several.
func defaultContainer(pod *corev1.Pod, errOut io.Writer) (string, error) {
	if len(pod.Spec.Containers) == 0 {
		return "", fmt.Errorf("pod %s has no containers", pod.Name)
	}
	if name := pod.Annotations["kubectl.kubernetes.io/default-container"]; name != "" {
		return name, nil
	}
	if len(pod.Spec.Containers) > 1 {
		names := make([]string, len(pod.Spec.Containers))
		for i, c := range pod.Spec.Containers {
			names[i] = c.Name
		}
		fmt.Fprintf(errOut, "Defaulted container %q out of: %s\n", names[0], strings.Join(names, ", "))
	}
	return pod.Spec.Containers[0].Name, nil
}

// resolvePod returns the pod of "name", "pod/name", or one pod selected
// by a controller such as "deploy/web".
func (o *LogsOptions) resolvePod(ctx context.Context, f *cli.Factory, cs kubernetes.Interface, ns, arg string) (*corev1.Pod, error) {
	typ, name, ok := strings.Cut(arg, "/")
	if !ok {
		return cs.CoreV1().Pods(ns).Get(ctx, arg, metav1.GetOptions{})
	}
	r, err := f.NewResolver()
	if err != nil {
		return nil, err
	}
	m, err := r.Mapping(typ)
	if err != nil {
		return nil, err
	}
	if m.GroupVersionKind.Kind == "Pod" && m.GroupVersionKind.Group == "" {
		return cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return nil, err
	}
	obj, err := resourceClient(dyn, m, ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sel, err := selectorOf(obj)
	if err != nil {
		return nil, err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) == 0 {
		return nil, fmt.Errorf("%s has no pods", arg)
	}
	sort.SliceStable(pods.Items, func(i, j int) bool { return podRank(&pods.Items[i]) > podRank(&pods.Items[j]) })
	return &pods.Items[0], nil
}

// podRank prefers running, ready and newer pods.
func podRank(p *corev1.Pod) int64 {
	var r int64
	if p.Status.Phase == corev1.PodRunning {
		r += 2 << 40
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			r += 1 << 40
		}
	}
	return r + p.CreationTimestamp.Unix()
}

func selectorOf(obj *unstructured.Unstructured) (string, error) {
	m, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found {
		return "", fmt.Errorf("%s/%s has no pod selector", obj.GetKind(), obj.GetName())
	}
	var ls metav1.LabelSelector
	if err := runtimeFromUnstructured(m, &ls); err != nil {
		return "", err
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
		// A Service's selector is a plain map.
		labels := map[string]string{}
		for k, v := range m {
			labels[k] = fmt.Sprint(v)
		}
		ls.MatchLabels = labels
	}
	s, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}
