package app

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/drain"
	"skiff.dev/ctl/pkg/printers"
)

// ExposeOptions are the flags of skiffctl expose.
type ExposeOptions struct {
	Port            string
	TargetPort      string
	Protocol        string
	Name            string
	Type            string
	Selector        string
	Labels          string
	ExternalIP      string
	ClusterIP       string
	SessionAffinity string
	LoadBalancerIP  string
	PortName        string
	DryRun          string
	Output          string
	FieldManager    string
}

// NewExposeCommand returns skiffctl expose.
func NewExposeCommand(f *cli.Factory) *cobra.Command {
	o := &ExposeOptions{}
	cmd := &cobra.Command{
		Use:   "expose (TYPE NAME | TYPE/NAME) [--port=port] [--protocol=TCP|UDP|SCTP] [--target-port=number-or-name] [--name=name] [--external-ip=external-ip-of-service] [--type=type]",
		Short: "Create a Service in front of a pod, Service, Deployment or ReplicaSet",
		Long: "expose creates a Service selecting the pods of the object, as kubectl expose\n" +
			"does: the selector is the object's pod selector (a pod's labels), the\n" +
			"ports those of --port, else the object's, the labels the object's.",
		Example: `  skiffctl expose deploy web --port=80 --target-port=8080
  skiffctl expose pod/web --name=web-np --type=NodePort`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), f, args, cmd.OutOrStdout())
		},
		ValidArgsFunction: completeResources(f),
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Port, "port", "", "The port that the service should serve on. Copied from the resource being exposed, if unspecified.")
	fs.StringVar(&o.TargetPort, "target-port", "", "Name or number for the port on the container that the service should direct traffic to. Optional.")
	fs.StringVar(&o.Protocol, "protocol", "", "The network protocol for the service to be created. Default is 'TCP'.")
	fs.StringVar(&o.Name, "name", "", "The name for the newly created object.")
	fs.StringVar(&o.Type, "type", "", "Type for this service: ClusterIP, NodePort, LoadBalancer, or ExternalName. Default is 'ClusterIP'.")
	fs.StringVar(&o.Selector, "selector", "", "A label selector to use for this service. Only equality-based selector requirements are supported.")
	fs.StringVarP(&o.Labels, "labels", "l", "", "Labels to apply to the service created by this call.")
	fs.StringVar(&o.ExternalIP, "external-ip", "", "Additional external IP address (not managed by Kubernetes) to accept for the service.")
	fs.StringVar(&o.ClusterIP, "cluster-ip", "", "ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to 'None' to create a headless service.")
	fs.StringVar(&o.SessionAffinity, "session-affinity", "", "If non-empty, set the session affinity for the service to this; legal values: 'None', 'ClientIP'")
	fs.StringVar(&o.LoadBalancerIP, "load-balancer-ip", "", "IP to assign to the LoadBalancer. If empty, an ephemeral IP will be created and used.")
	fs.StringVar(&o.PortName, "port-name", "", "Name of the port (one port only).")
	fs.StringVar(&o.DryRun, "dry-run", "none", `"none", "server" or "client": client only prints the Service; server sends it to be checked and not stored.`)
	fs.StringVarP(&o.Output, "output", "o", "", "Print the Service: yaml, json, name or jsonpath=EXPR.")
	fs.StringVar(&o.FieldManager, "field-manager", "kubectl-expose", "Name of the manager used to track field ownership.")
	fs.Lookup("dry-run").NoOptDefVal = drain.DryRunNoValue
	return cmd
}

// Service builds the Service kubectl's service/v2 generator would:
// selector selects the pods, labels label the Service, ports and
// protocols are those found on the object when --port is not given.
func (o *ExposeOptions) Service(name string, selector, labels map[string]string, ports []int32, protocols map[int32]corev1.Protocol) (*corev1.Service, error) {
	if o.Name != "" {
		name = o.Name
	}
	if o.Selector != "" {
		var err error
		if selector, err = parseLabels(o.Selector); err != nil {
			return nil, err
		}
	}
	if o.Labels != "" {
		var err error
		if labels, err = parseLabels(o.Labels); err != nil {
			return nil, err
		}
	}
	if o.Port != "" {
		ports = nil
		for _, s := range strings.Split(o.Port, ",") {
			p, err := strconv.Atoi(s)
			if err != nil || p < 1 || p > 65535 {
				return nil, fmt.Errorf("invalid --port %q", s)
			}
			ports = append(ports, int32(p))
		}
	}
	if len(ports) == 0 {
		return nil, fmt.Errorf("couldn't find port via --port flag or introspection")
	}
	if o.Type == string(corev1.ServiceTypeExternalName) {
		return nil, fmt.Errorf("cannot expose a service of type ExternalName")
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.ServiceSpec{Selector: selector},
	}
	for i, p := range ports {
		sp := corev1.ServicePort{Name: o.PortName, Port: p, Protocol: corev1.Protocol(o.Protocol)}
		if len(ports) > 1 {
			sp.Name = fmt.Sprintf("port-%d", i+1)
		}
		if sp.Protocol == "" {
			sp.Protocol = corev1.ProtocolTCP
			if proto, ok := protocols[p]; ok {
				sp.Protocol = proto
			}
		}
		sp.TargetPort = intstr.FromInt32(p)
		if o.TargetPort != "" {
			if n, err := strconv.Atoi(o.TargetPort); err == nil {
				sp.TargetPort = intstr.FromInt32(int32(n))
			} else {
				sp.TargetPort = intstr.FromString(o.TargetPort)
			}
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	if o.ExternalIP != "" {
		svc.Spec.ExternalIPs = []string{o.ExternalIP}
	}
	if o.Type != "" {
		svc.Spec.Type = corev1.ServiceType(o.Type)
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = o.LoadBalancerIP
	}
	if o.SessionAffinity != "" {
		switch corev1.ServiceAffinity(o.SessionAffinity) {
		case corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP:
			svc.Spec.SessionAffinity = corev1.ServiceAffinity(o.SessionAffinity)
		default:
			return nil, fmt.Errorf("unknown session affinity: %s", o.SessionAffinity)
		}
	}
	if o.ClusterIP != "" {
		svc.Spec.ClusterIP = o.ClusterIP
	}
	return svc, nil
}

// exposed reads what expose needs from the object: its pod selector, its
// labels, its ports and their protocols.
func exposed(obj *unstructured.Unstructured) (selector map[string]string, ports []int32, protocols map[int32]corev1.Protocol, err error) {
	protocols = map[int32]corev1.Protocol{}
	addContainers := func(spec map[string]any) error {
		var ps corev1.PodSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &ps); err != nil {
			return err
		}
		for _, c := range ps.Containers {
			for _, p := range c.Ports {
				ports = append(ports, p.ContainerPort)
				if p.Protocol != "" {
					protocols[p.ContainerPort] = p.Protocol
				}
			}
		}
		return nil
	}
	switch obj.GetKind() {
	case "Pod":
		selector = obj.GetLabels()
		if len(selector) == 0 {
			return nil, nil, nil, fmt.Errorf("the pod has no labels and cannot be exposed")
		}
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
		err = addContainers(spec)
	case "Service":
		selector, _, err = unstructured.NestedStringMap(obj.Object, "spec", "selector")
		if err == nil && len(selector) == 0 {
			return nil, nil, nil, fmt.Errorf("the service has no pod selector set")
		}
		var svc corev1.Service
		if err == nil {
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &svc)
		}
		for _, p := range svc.Spec.Ports {
			ports = append(ports, p.Port)
			if p.Protocol != "" {
				protocols[p.Port] = p.Protocol
			}
		}
	case "Deployment", "ReplicaSet", "ReplicationController":
		if obj.GetKind() == "ReplicationController" {
			selector, _, err = unstructured.NestedStringMap(obj.Object, "spec", "selector")
		} else {
			raw, _, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
			var ls metav1.LabelSelector
			if err = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err == nil {
				if len(ls.MatchExpressions) > 0 {
					return nil, nil, nil, fmt.Errorf("couldn't convert expressions - %+v to map-based selector format", ls.MatchExpressions)
				}
				selector = ls.MatchLabels
			}
		}
		if err == nil {
			spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
			err = addContainers(spec)
		}
	default:
		return nil, nil, nil, fmt.Errorf("cannot expose a %s", obj.GetKind())
	}
	return selector, ports, protocols, err
}

// Run reads the object and creates its Service.
func (o *ExposeOptions) Run(ctx context.Context, f *cli.Factory, args []string, out io.Writer) error {
	dry, err := drain.ParseDryRun(o.DryRun)
	if err != nil {
		return err
	}
	printer, err := printers.ParseOutput(o.Output)
	if err != nil {
		return err
	}
	var typ, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		typ, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2:
		typ, name = args[0], args[1]
	default:
		return fmt.Errorf("you must provide one resource: TYPE NAME or TYPE/NAME")
	}
	resolver, err := f.NewResolver()
	if err != nil {
		return err
	}
	mapping, err := resolver.Mapping(typ)
	if err != nil {
		return err
	}
	ns, explicit, err := f.Namespace()
	if err != nil {
		return err
	}
	dyn, err := f.Dynamic()
	if err != nil {
		return err
	}
	obj, err := resourceClient(dyn, mapping, ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	selector, ports, protocols, err := exposed(obj)
	if err != nil {
		return err
	}
	svc, err := o.Service(name, selector, obj.GetLabels(), ports, protocols)
	if err != nil {
		return err
	}
	if dry == drain.DryRunClient && explicit {
		svc.Namespace = ns
	}
	var created runtime.Object = svc
	if dry != drain.DryRunClient {
		c, err := f.Clientset()
		if err != nil {
			return err
		}
		opts := metav1.CreateOptions{FieldManager: o.FieldManager}
		if dry == drain.DryRunServer {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		s, err := c.CoreV1().Services(ns).Create(ctx, svc, opts)
		if err != nil {
			return err
		}
		s.APIVersion, s.Kind = "v1", "Service"
		created = s
	}
	if printer == nil {
		_, err := fmt.Fprintf(out, "service/%s exposed%s\n", svc.Name, dry.Suffix())
		return err
	}
	return printCreated(out, printer, created, "service", svc.Name, dry)
}
