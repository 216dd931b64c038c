package pod

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"skiff.dev/component-base/tracing"
	"skiff.dev/kubelet/pkg/images"
)

// TracedRuntime wraps the runtime so that, within a traced pod sync, pulling an
// image and creating and starting a container are spans of their own,
// named as upstream's CRI calls are (PullImage, CreateContainer,
// StartContainer), children of the sync's span. Outside a traced sync the
// calls go straight through.
func TracedRuntime(rt Runtime) Runtime { return &tracedRuntime{Runtime: rt} }

type tracedRuntime struct{ Runtime }

func (t *tracedRuntime) PullImage(ctx context.Context, ref string, creds []images.Credential) (img Image, err error) {
	ctx, span := tracing.Start(ctx, "PullImage", attribute.String("image", ref))
	defer func() { tracing.End(span, err) }()
	return t.Runtime.PullImage(ctx, ref, creds)
}

func (t *tracedRuntime) CreateContainer(ctx context.Context, s ContainerSpec) (err error) {
	ctx, span := tracing.Start(ctx, "CreateContainer", tracing.PodUIDKey.String(s.Labels[LabelPodUID]),
		attribute.String("k8s.container.name", s.Labels[LabelContainerName]), attribute.String("container.id", s.ID),
		attribute.String("image", s.Image))
	defer func() { tracing.End(span, err) }()
	return t.Runtime.CreateContainer(ctx, s)
}

func (t *tracedRuntime) StartContainer(ctx context.Context, id string) (err error) {
	ctx, span := tracing.Start(ctx, "StartContainer", attribute.String("container.id", id))
	defer func() { tracing.End(span, err) }()
	return t.Runtime.StartContainer(ctx, id)
}

// TracedNetwork wraps the network so that setting up a pod's sandbox (its
// network namespace and addresses, skiff's pod sandbox) is a span named as
// upstream's CRI call, RunPodSandbox, within a traced pod sync.
func TracedNetwork(n Network) Network { return &tracedNetwork{Network: n} }

type tracedNetwork struct{ Network }

func (t *tracedNetwork) SetUp(ctx context.Context, pn PodNetwork) (sb Sandbox, err error) {
	ctx, span := tracing.Start(ctx, "RunPodSandbox", tracing.NamespaceKey.String(pn.Namespace), tracing.PodNameKey.String(pn.Name),
		tracing.PodUIDKey.String(string(pn.UID)))
	defer func() {
		if err == nil && len(sb.IPs) > 0 {
			span.SetAttributes(attribute.StringSlice("k8s.pod.ips", sb.IPs))
		}
		tracing.End(span, err)
	}()
	return t.Network.SetUp(ctx, pn)
}

// Lost implements SandboxChecker when the wrapped network does.
func (t *tracedNetwork) Lost(sb Sandbox) bool {
	c, ok := t.Network.(SandboxChecker)
	return ok && c.Lost(sb)
}
