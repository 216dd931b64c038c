package e2e

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	cmapp "skiff.dev/controller-manager/app"
	schedapp "skiff.dev/scheduler/app"
)

// startDaemon runs one of the other daemons in-process until the test ends.
func startDaemon(t *testing.T, name string, run func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().WithName(name)))
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
}

// The whole path of seed 003 on one node: a ReplicaSet is stored, the
// controller manager makes its pods and gives the node its pod CIDR, the
// scheduler binds them, the kubelet runs them on containerd with their own
// addresses, and each serves HTTP on port 80. A deleted pod is replaced;
// a deleted ReplicaSet leaves no container behind.
func TestSeed003ReplicaSetServes(t *testing.T) {
	e := setup(t)
	ctx := context.Background()

	cmOpts := cmapp.NewOptions()
	cmOpts.LeaderElection.LeaderElect = false
	cmOpts.Serving.BindAddress, cmOpts.Serving.Port = "127.0.0.1", 0
	cmOpts.Controllers = []string{"replicaset", "node-ipam", "garbage-collector"}
	// One /24: the node gets exactly the test's pod CIDR.
	cmOpts.Controller.ClusterCIDR, cmOpts.Controller.NodeCIDRMaskSize = e.podCIDR, 24
	cm, err := cmapp.SetupWithConfig(ctx, cmOpts, e.ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "controller-manager", func(ctx context.Context) error { return cmapp.Run(ctx, cm) })

	schedOpts := schedapp.NewOptions()
	schedOpts.LeaderElection.LeaderElect = false
	schedOpts.Serving.BindAddress, schedOpts.Serving.Port = "127.0.0.1", 0
	sched, err := schedapp.SetupWithConfig(ctx, schedOpts, e.ts.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "scheduler", func(ctx context.Context) error { return schedapp.Run(ctx, sched) })
	// The API server reaches the kubelet with its kubelet-client
	// certificate and checks the kubelet's serving certificate.
	e.tlsCert = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".crt")
	e.tlsKey = filepath.Join(e.ts.PKIDir, "kubelet-"+nodeName+".key")
	e.startKubelet(t)

	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To(int64(1)),
					Containers: []corev1.Container{{
						Name: "web", Image: "busybox",
						Command: []string{"sh", "-c", "mkdir -p /www && echo served-by-$(hostname) > /www/index.html && exec httpd -f -p 80 -h /www"},
						Ports:   []corev1.ContainerPort{{ContainerPort: 80}},
					}},
				},
			},
		},
	}
	if _, err := e.client.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	serving := func(what string, exclude string) []corev1.Pod {
		var pods []corev1.Pod
		poll(t, 3*time.Minute, what, func() (bool, string) {
			l, err := e.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return false, err.Error()
			}
			pods = pods[:0]
			var states []string
			for _, p := range l.Items {
				states = append(states, fmt.Sprintf("%s %s %s %q %+v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP, p.Status.ContainerStatuses))
				if p.DeletionTimestamp == nil && p.Name != exclude && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
					pods = append(pods, p)
				}
			}
			return len(pods) == 2, strings.Join(states, "; ")
		})
		_, cidr, _ := net.ParseCIDR(e.podCIDR)
		if pods[0].Status.PodIP == pods[1].Status.PodIP {
			t.Fatalf("both pods have the address %s", pods[0].Status.PodIP)
		}
		for _, p := range pods {
			if ref := metav1.GetControllerOf(&p); ref == nil || ref.Name != "web" || p.GenerateName != "web-" {
				t.Errorf("pod %s: controller %v, generateName %q", p.Name, ref, p.GenerateName)
			}
			if !cidr.Contains(net.ParseIP(p.Status.PodIP)) || p.Spec.NodeName != nodeName {
				t.Errorf("pod %s on %q with %s, want on %s in %s", p.Name, p.Spec.NodeName, p.Status.PodIP, nodeName, e.podCIDR)
			}
			var body string
			poll(t, 30*time.Second, "HTTP from "+p.Name, func() (bool, string) {
				var err error
				body, err = httpGet("http://" + net.JoinHostPort(p.Status.PodIP, "80") + "/")
				if err != nil {
					return false, err.Error()
				}
				return true, ""
			})
			if want := "served-by-" + p.Name; strings.TrimSpace(body) != want {
				t.Errorf("pod %s answered %q, want %q", p.Name, body, want)
			}
		}
		return pods
	}
	pods := serving("the ReplicaSet's two pods serving", "")

	// The real kubectl, through the API server to this kubelet.
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", e.ts.Kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if got, want := strings.TrimSpace(kubectl("exec", pods[0].Name, "--", "cat", "/www/index.html")), "served-by-"+pods[0].Name; got != want {
		t.Errorf("kubectl exec: %q, want %q", got, want)
	}
	kubectl("exec", pods[0].Name, "--", "sh", "-c", "echo to-the-log > /proc/1/fd/1")
	if got := kubectl("logs", pods[0].Name); !strings.Contains(got, "to-the-log") {
		t.Errorf("kubectl logs: %q, want the line written to the container's stdout", got)
	}

	gone := pods[0]
	if err := e.client.CoreV1().Pods("default").Delete(ctx, gone.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	serving("a replacement for "+gone.Name, gone.Name)
	poll(t, time.Minute, gone.Name+"'s containers removed", func() (bool, string) {
		ids := e.podContainers(t, gone.UID)
		return len(ids) == 0, strings.Join(ids, ",")
	})

	if err := e.client.AppsV1().ReplicaSets("default").Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	poll(t, 2*time.Minute, "every pod and container of the ReplicaSet gone", func() (bool, string) {
		l, err := e.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		left := 0
		for _, p := range l.Items {
			left += len(e.podContainers(t, p.UID))
		}
		return len(l.Items) == 0, fmt.Sprintf("%d pods, %d containers", len(l.Items), left)
	})
}
