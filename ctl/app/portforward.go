package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"skiff.dev/ctl/pkg/cli"
)

// PortForwardOptions are the flags of skiffctl port-forward.
type PortForwardOptions struct {
	Addresses         []string
	PodRunningTimeout time.Duration
	// Ready, when set, is closed once the ports listen (tests).
	Ready chan struct{}
}

// NewPortForwardCommand returns skiffctl port-forward.
func NewPortForwardCommand(f *cli.Factory) *cobra.Command {
	o := &PortForwardOptions{PodRunningTimeout: time.Minute}
	cmd := &cobra.Command{
		Use:   "port-forward (POD | TYPE/NAME) [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N]",
		Short: "Forward local ports to a pod",
		Long: "port-forward listens on local ports and forwards each connection to a port\n" +
			"of the pod, through the API server and the pod's kubelet (SPDY tunnelled\n" +
			"over WebSocket, or SPDY when the server has no WebSocket), until\n" +
			"interrupted. A REMOTE_PORT may be a container port's name; a Service's\n" +
			"port is mapped to its target port.",
		Example: `  skiffctl port-forward pod/web 8080:80
  skiffctl port-forward svc/web :http --address 127.0.0.1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("TYPE/NAME and list of ports are required for port-forward")
			}
			return o.Run(cmd.Context(), f, args[0], args[1:], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
		ValidArgsFunction: completeResources(f),
	}
	cmd.Flags().StringSliceVar(&o.Addresses, "address", []string{"localhost"}, "Addresses to listen on (comma separated). Only accepts IP addresses or localhost as a value. When localhost is supplied, kubectl will try to bind on both 127.0.0.1 and ::1 and will fail if neither of these addresses are available to bind.")
	cmd.Flags().DurationVar(&o.PodRunningTimeout, "pod-running-timeout", o.PodRunningTimeout, "How long to wait until at least one pod is running (e.g. 5s, 2m).")
	return cmd
}

// Run forwards until ctx ends or the connection to the pod is lost.
func (o *PortForwardOptions) Run(ctx context.Context, f *cli.Factory, target string, ports []string, out, errOut io.Writer) error {
	c, ns, pod, err := targetPod(ctx, f, target, o.PodRunningTimeout)
	if err != nil {
		return err
	}
	if pod.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("unable to forward port because pod is not running. Current status=%v", pod.Status.Phase)
	}
	if strings.HasPrefix(target, "svc/") || strings.HasPrefix(target, "service/") || strings.HasPrefix(target, "services/") {
		svc, err := c.CoreV1().Services(ns).Get(ctx, target[strings.Index(target, "/")+1:], metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ports, err = servicePorts(svc, pod, ports); err != nil {
			return err
		}
	} else if ports, err = podPorts(pod, ports); err != nil {
		return err
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return err
	}
	req := c.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward")
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, req.URL())
	tunnel, err := portforward.NewSPDYOverWebsocketDialer(req.URL(), cfg)
	if err != nil {
		return err
	}
	dialer = portforward.NewFallbackDialer(tunnel, dialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	stop := make(chan struct{})
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	ready := o.Ready
	if ready == nil {
		ready = make(chan struct{})
	}
	fw, err := portforward.NewOnAddresses(dialer, o.Addresses, ports, stop, ready, out, errOut)
	if err != nil {
		return err
	}
	return fw.ForwardPorts()
}

// podPorts maps named remote ports to the pod's container port numbers.
func podPorts(pod *corev1.Pod, ports []string) ([]string, error) {
	out := make([]string, len(ports))
	for i, p := range ports {
		local, remote, hasLocal := strings.Cut(p, ":")
		if !hasLocal {
			remote = local
		}
		if _, err := strconv.Atoi(remote); err != nil {
			n, err := containerPortByName(pod, remote)
			if err != nil {
				return nil, err
			}
			remote = strconv.Itoa(int(n))
			if !hasLocal {
				local = remote
			}
		}
		if hasLocal || local != remote {
			out[i] = local + ":" + remote
		} else {
			out[i] = remote
		}
	}
	return out, nil
}

func containerPortByName(pod *corev1.Pod, name string) (int32, error) {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort, nil
			}
		}
	}
	return 0, fmt.Errorf("Pod '%s' does not have a named port '%s'", pod.Name, name)
}

// servicePorts maps Service ports (number or name) to the pod ports they
// target, keeping the Service port as the local one, as kubectl does.
func servicePorts(svc *corev1.Service, pod *corev1.Pod, ports []string) ([]string, error) {
	out := make([]string, len(ports))
	for i, p := range ports {
		local, remote, hasLocal := strings.Cut(p, ":")
		if !hasLocal {
			remote = local
		}
		var sp *corev1.ServicePort
		for j := range svc.Spec.Ports {
			s := &svc.Spec.Ports[j]
			if s.Name == remote || strconv.Itoa(int(s.Port)) == remote {
				sp = s
			}
		}
		if sp == nil {
			return nil, fmt.Errorf("Service %s does not have a service port %s", svc.Name, remote)
		}
		if !hasLocal {
			local = strconv.Itoa(int(sp.Port))
		}
		target := sp.TargetPort.IntValue()
		if sp.TargetPort.String() == "" || (target == 0 && sp.TargetPort.StrVal == "") {
			target = int(sp.Port)
		} else if target == 0 {
			n, err := containerPortByName(pod, sp.TargetPort.StrVal)
			if err != nil {
				return nil, err
			}
			target = int(n)
		}
		out[i] = local + ":" + strconv.Itoa(target)
	}
	return out, nil
}
