package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/namespaces"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"skiff.dev/kubelet/app"
)

// TestImageGarbageCollection runs the kubelet's image GC against the real
// containerd with thresholds this disk always exceeds (high 1%, low 0%,
// no minimum age, every second): an image that only a deleted pod used is
// removed, the image of a running pod is kept.
func TestImageGarbageCollection(t *testing.T) {
	e := setup(t)
	// The same busybox under another name and in Docker's manifest format:
	// a second image with its own digest.
	layout := buildBusyboxImage(t)
	if out, err := exec.Command("skopeo", "copy", "--dest-tls-verify=false", "--format", "v2s2",
		"oci:"+layout+":latest", "docker://"+e.registry+"/library/spare:latest").CombinedOutput(); err != nil {
		t.Fatalf("skopeo copy: %v\n%s", err, out)
	}
	e.customize = func(o *app.Options) {
		o.ImageGC.HighThresholdPercent, o.ImageGC.LowThresholdPercent, o.ImageGC.MinAge = 1, 0, 0
		o.ImageGCInterval = time.Second
	}
	e.startKubelet(t)
	ctx := context.Background()
	e.assignPodCIDR(t)
	pod := func(name, image string, policy corev1.RestartPolicy, cmd ...string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				RestartPolicy: policy, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: "c", Image: image, Command: cmd}},
			},
		}
	}
	e.createPod(t, pod("keeper", "busybox", corev1.RestartPolicyAlways, "sleep", "3600"))
	e.createPod(t, pod("once", "spare", corev1.RestartPolicyNever, "true"))
	poll(t, 60*time.Second, "keeper to run and once to finish", func() (bool, string) {
		k, o := e.getPod(t, "keeper"), e.getPod(t, "once")
		return k.Status.Phase == corev1.PodRunning && o.Status.Phase == corev1.PodSucceeded, fmt.Sprintf("keeper %s, once %s", k.Status.Phase, o.Status.Phase)
	})
	if err := e.client.CoreV1().Pods("default").Delete(ctx, "once", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	images := func() string {
		list, err := e.ctd.Client.ListImages(namespaces.WithNamespace(ctx, e.namespace))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, img := range list {
			names = append(names, img.Name())
		}
		return strings.Join(names, " ")
	}
	poll(t, 60*time.Second, "the unused image to be collected", func() (bool, string) {
		got := images()
		return !strings.Contains(got, "library/spare"), got
	})
	if got := images(); !strings.Contains(got, "docker.io/library/busybox:latest") {
		t.Errorf("the running pod's image was collected: images now %q", got)
	}
	if p := e.getPod(t, "keeper"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("keeper is %s after the collection", p.Status.Phase)
	}
}
