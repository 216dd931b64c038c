package pod

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Objects reads the config maps and secrets a pod refers to.
type Objects interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// EnvContext is what environment values may refer to besides the pod.
type EnvContext struct {
	Objects Objects
	// PodIPs are the pod's addresses; HostIP the node's.
	PodIPs []string
	HostIP string
	// NodeAllocatable stands in for unset limits in resourceFieldRef, as
	// upstream does.
	NodeAllocatable corev1.ResourceList
	// Services gives the service environment variables (none when nil).
	Services ServiceLister
}

// ResolveEnv computes a container's environment as "NAME=value" strings,
// as upstream: envFrom first, then env, each in order, later names
// replacing earlier ones, and $(NAME) references in env values expanded
// against the names defined before them and the service variables; then
// the service variables (ServiceEnv) that the container does not set.
func ResolveEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, ec EnvContext) ([]string, error) {
	services, err := ServiceEnv(pod, ec.Services)
	if err != nil {
		return nil, err
	}
	var order []string
	vals := map[string]string{}
	// expand is what $(NAME) sees: the service variables, overridden by
	// the container's own as they are defined.
	expand := make(map[string]string, len(services))
	for k, v := range services {
		expand[k] = v
	}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
		expand[k] = v
	}
	for _, from := range c.EnvFrom {
		data, err := envFromData(ctx, pod.Namespace, from, ec.Objects)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(from.Prefix+k, data[k])
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, Expand(e.Value, expand))
			continue
		}
		v, ok, err := envValueFrom(ctx, pod, c, e.ValueFrom, ec)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	out := make([]string, 0, len(order)+len(services))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	for _, k := range sortedKeys(services) {
		if _, ok := vals[k]; !ok {
			out = append(out, k+"="+services[k])
		}
	}
	return out, nil
}

// EnvMap turns "NAME=value" strings into a map, for $(NAME) expansion.
func EnvMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// envFromData reads the keys of one envFrom source.
func envFromData(ctx context.Context, ns string, from corev1.EnvFromSource, objs Objects) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := objs.ConfigMap(ctx, ns, from.ConfigMapRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
				return nil, nil
			}
			return nil, fmt.Errorf("configmap %q: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := objs.Secret(ctx, ns, from.SecretRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && from.SecretRef.Optional != nil && *from.SecretRef.Optional {
				return nil, nil
			}
			return nil, fmt.Errorf("secret %q: %w", from.SecretRef.Name, err)
		}
		out := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

func envValueFrom(ctx context.Context, pod *corev1.Pod, c *corev1.Container, from *corev1.EnvVarSource, ec EnvContext) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := FieldValue(pod, from.FieldRef.FieldPath, ec)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := ResourceValue(c, from.ResourceFieldRef, ec.NodeAllocatable)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		optional := ref.Optional != nil && *ref.Optional
		cm, err := ec.Objects.ConfigMap(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if optional && apierrors.IsNotFound(err) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("configmap %q: %w", ref.Name, err)
		}
		v, ok := cm.Data[ref.Key]
		if !ok {
			if optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)
		}
		return v, true, nil
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		optional := ref.Optional != nil && *ref.Optional
		s, err := ec.Objects.Secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if optional && apierrors.IsNotFound(err) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("secret %q: %w", ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			if optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)
		}
		return string(v), true, nil
	}
	return "", false, fmt.Errorf("no value source")
}

// FieldValue is the value of a downward API field path.
func FieldValue(pod *corev1.Pod, path string, ec EnvContext) (string, error) {
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return ec.HostIP, nil
	case "status.podIP":
		if len(ec.PodIPs) > 0 {
			return ec.PodIPs[0], nil
		}
		return "", nil
	case "status.podIPs":
		return strings.Join(ec.PodIPs, ","), nil
	}
	return "", fmt.Errorf("unsupported fieldPath %q", path)
}

// subscript reads prefix['key'].
func subscript(path, prefix string) (string, bool) {
	if !strings.HasPrefix(path, prefix+"['") || !strings.HasSuffix(path, "']") {
		return "", false
	}
	return path[len(prefix)+2 : len(path)-2], true
}

// ResourceValue is the value of a resourceFieldRef: the quantity divided by
// the divisor, rounded up, as upstream.
func ResourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector, alloc corev1.ResourceList) (string, error) {
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		return "", fmt.Errorf("resourceFieldRef for container %q is not supported in container %q", ref.ContainerName, c.Name)
	}
	var q resource.Quantity
	var name corev1.ResourceName
	switch {
	case strings.HasPrefix(ref.Resource, "limits."):
		name = corev1.ResourceName(strings.TrimPrefix(ref.Resource, "limits."))
		var ok bool
		if q, ok = c.Resources.Limits[name]; !ok {
			q = alloc[name]
		}
	case strings.HasPrefix(ref.Resource, "requests."):
		name = corev1.ResourceName(strings.TrimPrefix(ref.Resource, "requests."))
		q = c.Resources.Requests[name]
	default:
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == corev1.ResourceCPU {
		v := int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))
		return strconv.FormatInt(v, 10), nil
	}
	v := int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))
	return strconv.FormatInt(v, 10), nil
}

// Expand replaces $(NAME) with the value of NAME when it is defined; $$
// escapes a $; anything else is left as it is (upstream's expansion).
func Expand(s string, vals map[string]string) string {
	return expand(s, func(name string) (string, bool) {
		v, ok := vals[name]
		return v, ok
	})
}

// expand is Expand with a lookup function.
func expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteByte(s[i])
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
