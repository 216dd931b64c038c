package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"skiff.dev/ctl/pkg/cli"
	"skiff.dev/ctl/pkg/drain"
	"skiff.dev/ctl/pkg/printers"
)

// RunOptions are the flags of skiffctl run.
type RunOptions struct {
	Image           string
	Port            string
	Labels          string
	Annotations     []string
	Env             []string
	Restart         string
	Command         bool
	ImagePullPolicy string
	Privileged      bool
	Expose          bool
	DryRun          string
	Output          string
	FieldManager    string

	// Attach, Stdin (-i), TTY (-t), Remove (--rm), LeaveStdinOpen, Quiet
	// and PodRunningTimeout are kubectl's attached run: wait for the pod
	// to run, attach to it, and with --restart=Never or OnFailure end
	// with its container's exit code.
	Attach            bool
	Stdin             bool
	TTY               bool
	Remove            bool
	LeaveStdinOpen    bool
	Quiet             bool
	PodRunningTimeout time.Duration

	dry     drain.DryRun
	printer *printers.ObjectPrinter
}

// NewRunCommand returns skiffctl run.
func NewRunCommand(f *cli.Factory) *cobra.Command {
	cmd, _ := newRunCommand(f)
	return cmd
}

// Complete checks NAME and the flags together, after giving --attach its
// default (true with -i), as kubectl run does before it creates anything.
func (o *RunOptions) Complete(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
		return fmt.Errorf("NAME is required for run")
	}
	if !cmd.Flags().Changed("attach") && o.Stdin {
		o.Attach = true
	}
	return o.Validate()
}

func newRunCommand(f *cli.Factory) (*cobra.Command, *RunOptions) {
	o := &RunOptions{PodRunningTimeout: time.Minute}
	cmd := &cobra.Command{
		Use:   "run NAME --image=image [--env=\"key=value\"] [--port=port] [--dry-run=server|client] [--command] -- [COMMAND] [args...]",
		Short: "Run a pod with one container of an image",
		Long: "run creates a pod of one container, named as the pod, labelled run=NAME\n" +
			"unless --labels says otherwise, as kubectl run does; --expose creates a\n" +
			"Service of the same name in front of it.",
		Example: `  skiffctl run web --image=nginx --port=80 --expose
  skiffctl run job --image=busybox --restart=Never --command -- sh -c 'date'
  skiffctl run -i --rm --restart=Never probe --image=busybox -- sh -c 'read x; echo got $x'
  skiffctl run web --image=nginx --dry-run=client -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if o.Attach {
				return o.RunAttached(cmd.Context(), f, args[0], args[1:], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return o.Run(cmd.Context(), f, args[0], args[1:], cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Image, "image", "", "The image for the container to run.")
	fs.StringVar(&o.Port, "port", "", "The port that this container exposes.")
	fs.StringVarP(&o.Labels, "labels", "l", "", "Comma separated labels to apply to the pod. Will override previous values.")
	fs.StringArrayVar(&o.Annotations, "annotations", nil, "Annotations to apply to the pod.")
	fs.StringArrayVar(&o.Env, "env", nil, "Environment variables to set in the container.")
	fs.StringVar(&o.Restart, "restart", "Always", "The restart policy for this Pod. Legal values [Always, OnFailure, Never].")
	fs.BoolVar(&o.Command, "command", false, "If true and extra arguments are present, use them as the 'command' field in the container, rather than the 'args' field which is the default.")
	fs.StringVar(&o.ImagePullPolicy, "image-pull-policy", "", "The image pull policy for the container: Always, IfNotPresent or Never; empty leaves it to the server.")
	fs.BoolVar(&o.Privileged, "privileged", false, "If true, run the container in privileged mode.")
	fs.BoolVar(&o.Expose, "expose", false, "If true, create a ClusterIP service associated with the pod. Requires --port.")
	fs.StringVar(&o.DryRun, "dry-run", "none", `"none", "server" or "client": client only prints the objects; server sends them to be checked and not stored.`)
	fs.StringVarP(&o.Output, "output", "o", "", "Print the objects: yaml, json, name or jsonpath=EXPR.")
	fs.StringVar(&o.FieldManager, "field-manager", "kubectl-run", "Name of the manager used to track field ownership.")
	fs.BoolVar(&o.Attach, "attach", false, "If true, wait for the Pod to start running, and then attach to the Pod as if 'kubectl attach ...' were called.  Default false, unless '-i/--stdin' is set, in which case the default is true. With '--restart=Never' the exit code of the container process is returned.")
	fs.BoolVarP(&o.Stdin, "stdin", "i", false, "Keep stdin open on the container in the pod, even if nothing is attached.")
	fs.BoolVarP(&o.TTY, "tty", "t", false, "Allocate a TTY for the container in the pod.")
	fs.BoolVar(&o.Remove, "rm", false, "If true, delete the pod after it exits.  Only valid when attaching to the container, e.g. with '--attach' or with '-i/--stdin'.")
	fs.BoolVar(&o.LeaveStdinOpen, "leave-stdin-open", false, "If the pod is started in interactive mode or with stdin, leave stdin open after the first attach completes. By default, stdin will be closed after the first attach completes.")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "If true, suppress prompt messages.")
	fs.DurationVar(&o.PodRunningTimeout, "pod-running-timeout", o.PodRunningTimeout, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
	fs.Lookup("dry-run").NoOptDefVal = drain.DryRunNoValue
	_ = cmd.MarkFlagRequired("image")
	return cmd, o
}

// parseLabels reads "a=b,c=d" as kubectl's --labels.
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid label spec: %v", kv)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("invalid label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("invalid label value %q: %s", v, strings.Join(errs, "; "))
		}
		out[k] = v
	}
	return out, nil
}

// Pod builds the pod kubectl run would, for name and the arguments after
// the name.
func (o *RunOptions) Pod(name string, args []string) (*corev1.Pod, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("invalid pod name %q: %s", name, strings.Join(errs, "; "))
	}
	if o.Image == "" {
		return nil, fmt.Errorf("--image is required")
	}
	labels := map[string]string{"run": name}
	if o.Labels != "" {
		var err error
		if labels, err = parseLabels(o.Labels); err != nil {
			return nil, err
		}
	}
	var restart corev1.RestartPolicy
	switch o.Restart {
	case "Always", "OnFailure", "Never":
		restart = corev1.RestartPolicy(o.Restart)
	default:
		return nil, fmt.Errorf("invalid restart policy: %s", o.Restart)
	}
	c := corev1.Container{Name: name, Image: o.Image, ImagePullPolicy: corev1.PullPolicy(o.ImagePullPolicy)}
	switch o.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return nil, fmt.Errorf("invalid image pull policy: %s", o.ImagePullPolicy)
	}
	if len(args) > 0 {
		if o.Command {
			c.Command = args
		} else {
			c.Args = args
		}
	}
	if o.Port != "" {
		port, err := strconv.Atoi(o.Port)
		if err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("invalid --port %q: a port number between 1 and 65535", o.Port)
		}
		c.Ports = []corev1.ContainerPort{{ContainerPort: int32(port)}}
	}
	for _, e := range o.Env {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid env: %v", e)
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: v})
	}
	if o.Privileged {
		c.SecurityContext = &corev1.SecurityContext{Privileged: &o.Privileged}
	}
	// As kubectl's pod generator: -i keeps stdin open, for the first
	// attach only unless --leave-stdin-open.
	c.Stdin, c.StdinOnce, c.TTY = o.Stdin, o.Stdin && !o.LeaveStdinOpen, o.TTY
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Containers:    []corev1.Container{c},
			RestartPolicy: restart,
			DNSPolicy:     corev1.DNSClusterFirst,
		},
	}
	for _, a := range o.Annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid annotation spec: %v", a)
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[k] = v
	}
	return pod, nil
}

// Run creates the Service (with --expose), then the pod, and prints each
// as kubectl does.
func (o *RunOptions) Run(ctx context.Context, f *cli.Factory, name string, args []string, out io.Writer) error {
	_, _, _, err := o.create(ctx, f, name, args, out, false)
	return err
}

// create creates (or, with --dry-run, prints) the Service and the pod and
// returns the pod as created, the Service (nil without --expose) and the
// client (nil for a client dry run). An attached run prints the Service
// but not the pod, as kubectl.
func (o *RunOptions) create(ctx context.Context, f *cli.Factory, name string, args []string, out io.Writer, attached bool) (*corev1.Pod, *corev1.Service, kubernetes.Interface, error) {
	pod, svc, c, err := o.createObjects(ctx, f, name, args, out)
	if err != nil || attached {
		return pod, svc, c, err
	}
	return pod, svc, c, printCreated(out, o.printer, pod, "pod", name, o.dry)
}

func (o *RunOptions) createObjects(ctx context.Context, f *cli.Factory, name string, args []string, out io.Writer) (*corev1.Pod, *corev1.Service, kubernetes.Interface, error) {
	dry, err := drain.ParseDryRun(o.DryRun)
	if err != nil {
		return nil, nil, nil, err
	}
	printer, err := printers.ParseOutput(o.Output)
	if err != nil {
		return nil, nil, nil, err
	}
	o.dry, o.printer = dry, printer
	pod, err := o.Pod(name, args)
	if err != nil {
		return nil, nil, nil, err
	}
	var svc *corev1.Service
	if o.Expose {
		if o.Port == "" {
			return nil, nil, nil, fmt.Errorf("--port must be set when exposing a service")
		}
		e := &ExposeOptions{Port: o.Port}
		// As kubectl: the Service carries --labels, not the default run=NAME.
		var labels map[string]string
		if o.Labels != "" {
			labels = pod.Labels
		}
		if svc, err = e.Service(name, pod.Labels, labels, nil, nil); err != nil {
			return nil, nil, nil, err
		}
	}
	ns, explicit, err := f.Namespace()
	if err != nil {
		return nil, nil, nil, err
	}
	if dry == drain.DryRunClient && explicit {
		// As kubectl: a client dry run shows the namespace asked for.
		pod.Namespace = ns
		if svc != nil {
			svc.Namespace = ns
		}
	}
	var c kubernetes.Interface
	if dry != drain.DryRunClient {
		if c, err = f.Clientset(); err != nil {
			return nil, nil, nil, err
		}
	}
	opts := metav1.CreateOptions{FieldManager: o.FieldManager}
	if dry == drain.DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if svc != nil {
		var created runtime.Object = svc
		if c != nil {
			s, err := c.CoreV1().Services(ns).Create(ctx, svc, opts)
			if err != nil {
				return nil, nil, nil, err
			}
			s.APIVersion, s.Kind = "v1", "Service"
			created = s
		}
		if err := printCreated(out, printer, created, "service", name, dry); err != nil {
			return nil, nil, nil, err
		}
		if s, ok := created.(*corev1.Service); ok {
			svc = s
		}
	}
	if svc != nil && printer != nil && printer.Format == "yaml" {
		// kubectl's separator between the Service and the pod.
		fmt.Fprint(out, "---\n---\n")
	}
	if c != nil {
		p, err := c.CoreV1().Pods(ns).Create(ctx, pod, opts)
		if err != nil {
			return nil, svc, c, err
		}
		p.APIVersion, p.Kind = "v1", "Pod"
		pod = p
	}
	return pod, svc, c, nil
}

// printCreated prints obj with -o, else kubectl's "kind/name created".
func printCreated(out io.Writer, printer *printers.ObjectPrinter, obj runtime.Object, kind, name string, dry drain.DryRun) error {
	if printer == nil {
		_, err := fmt.Fprintf(out, "%s/%s created%s\n", kind, name, dry.Suffix())
		return err
	}
	if printer.Format == "json" {
		// kubectl prints the typed object: its fields in their Go order.
		b, err := json.MarshalIndent(obj, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	return printer.Print(out, []*unstructured.Unstructured{{Object: m}}, true)
}
