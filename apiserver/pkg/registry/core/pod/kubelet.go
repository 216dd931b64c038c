package pod

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"skiff.dev/apiserver/pkg/registry/rest"
	"skiff.dev/apiserver/pkg/storage"
)

// The subresources a pod's node's kubelet serves.
const (
	SubLog         = "log"
	SubExec        = "exec"
	SubAttach      = "attach"
	SubPortForward = "portforward"
)

// DefaultContainerAnnotation names the container kubectl picks when a pod
// has several and none is asked for; the API server honours it too.
const DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// Kubelet serves pods/log, exec, attach and portforward: their options,
// and the kubelet of the pod's node that serves them.
var Kubelet = &rest.Kubelet{
	LogOptions:     LogOptions,
	Log:            LogLocation,
	ConnectOptions: ConnectOptions,
	Stream:         StreamLocation,
}

// LogLocation is upstream's LogLocation: the kubelet's /containerLogs of
// the container opts names, or of the default one (Container), which it
// fills into opts.
func LogLocation(ctx context.Context, deps rest.LocationDeps, ns, name string, opts *corev1.PodLogOptions) (rest.KubeletTarget, error) {
	pod, node, err := podAndNode(ctx, deps, ns, name)
	if err == nil {
		opts.Container, err = Container(pod, opts.Container)
	}
	if err != nil {
		return rest.KubeletTarget{}, err
	}
	return rest.KubeletTarget{Node: node, Path: fmt.Sprintf("/containerLogs/%s/%s/%s", ns, name, opts.Container), Query: logQuery(opts)}, nil
}

// ConnectOptions reads the options of exec, attach or portforward (sub)
// from a query as upstream's ConnectResource decodes them into v1
// PodExecOptions, PodAttachOptions and PodPortForwardOptions. A value that
// does not convert is upstream's 400. The options carry their kind, which
// is the kind admission sees.
func ConnectOptions(sub string, q url.Values) (runtime.Object, error) {
	tm := metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String()}
	switch sub {
	case SubExec:
		tm.Kind = "PodExecOptions"
		return &corev1.PodExecOptions{TypeMeta: tm, Stdin: queryBool(q, "stdin"), Stdout: queryBool(q, "stdout"), Stderr: queryBool(q, "stderr"),
			TTY: queryBool(q, "tty"), Container: q.Get("container"), Command: q[corev1.ExecCommandParam]}, nil
	case SubAttach:
		tm.Kind = "PodAttachOptions"
		return &corev1.PodAttachOptions{TypeMeta: tm, Stdin: queryBool(q, "stdin"), Stdout: queryBool(q, "stdout"), Stderr: queryBool(q, "stderr"),
			TTY: queryBool(q, "tty"), Container: q.Get("container")}, nil
	case SubPortForward:
		tm.Kind = "PodPortForwardOptions"
		opts := &corev1.PodPortForwardOptions{TypeMeta: tm}
		if ports := q["ports"]; len(ports) > 0 {
			if err := metav1.Convert_Slice_string_To_Slice_int32(&ports, &opts.Ports, nil); err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
		}
		return opts, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods/" + sub}, "")
}

// StreamLocation is upstream's streamLocation: the kubelet's path for an
// exec or attach in a container of the pod (the one asked for, or the
// default), or for a port-forward to the pod, with the options as its
// query. An exec without a command is upstream's 400.
func StreamLocation(ctx context.Context, deps rest.LocationDeps, ns, name, sub string, opts runtime.Object) (rest.KubeletTarget, error) {
	pod, node, err := podAndNode(ctx, deps, ns, name)
	if err != nil {
		return rest.KubeletTarget{}, err
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
		return rest.KubeletTarget{}, err
	}
	return rest.KubeletTarget{Node: node, Path: path, Query: streamQuery(opts)}, nil
}

// podAndNode reads the pod and the node it is bound to. A pod without a
// node is upstream's 400.
func podAndNode(ctx context.Context, deps rest.LocationDeps, ns, name string) (*corev1.Pod, *corev1.Node, error) {
	obj, err := deps.Store.Get(ctx, ns, name)
	if err != nil {
		return nil, nil, err
	}
	pod := obj.(*corev1.Pod)
	if pod.Spec.NodeName == "" {
		return pod, nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	nodes := deps.CoreStore("nodes")
	if nodes == nil {
		return pod, nil, apierrors.NewInternalError(errors.New("no node storage"))
	}
	nobj, err := nodes.Get(ctx, "", pod.Spec.NodeName)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) || apierrors.IsNotFound(err) {
			return pod, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, pod.Spec.NodeName)
		}
		return pod, nil, err
	}
	return pod, nobj.(*corev1.Node), nil
}

// Container chooses the container a log, exec or attach request is for:
// the one named, else the annotation's default, else the only one. The
// errors are upstream's (ValidateContainer).
func Container(pod *corev1.Pod, name string) (string, error) {
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

// LogOptions reads upstream's PodLogOptions from a query and
// validates them as upstream's ValidatePodLogOptions.
func LogOptions(q url.Values) (*corev1.PodLogOptions, error) {
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

// streamPath is the kubelet's path for exec or attach in a container of
// pod: the one asked for, or the default (Container).
func streamPath(pod *corev1.Pod, sub, container string) (string, error) {
	container, err := Container(pod, container)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("/%s/%s/%s/%s", sub, pod.Namespace, pod.Name, container), nil
}
